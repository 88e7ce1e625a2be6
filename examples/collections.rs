//! The guide's chapter "The collections" (`docs/guide/13-collections.md`), runnable:
//! `cargo run --example collections`.

fn main() {
    println!("collections");
}
