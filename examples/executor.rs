//! The guide's chapter "The executor and its settings" (`docs/guide/09-the-executor.md`), runnable:
//! `cargo run --example executor`.

fn main() {
    println!("executor");
}
