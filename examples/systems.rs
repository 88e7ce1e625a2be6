//! The guide's chapter "Systems and services" (`docs/guide/01-systems-and-services.md`), runnable:
//! `cargo run --example systems`.

fn main() {
    println!("systems");
}
