//! The guide's chapter "Durable scripts" (`docs/guide/06-scripts.md`), runnable:
//! `cargo run --example scripts`.

fn main() {
    println!("scripts");
}
