//! The guide's chapter "Entities and queries" (`docs/guide/04-entities-and-queries.md`), runnable:
//! `cargo run --example entities`.

fn main() {
    println!("entities");
}
