//! The guide's chapter "The command lines" (`docs/guide/12-clis.md`), runnable:
//! `cargo run --example cli`.

fn main() {
    println!("cli");
}
