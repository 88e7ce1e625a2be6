//! The guide's chapter "Messages" (`docs/guide/05-messages.md`), runnable:
//! `cargo run --example messages`.

fn main() {
    println!("messages");
}
