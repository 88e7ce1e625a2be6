//! The guide's chapter "Checking your frame with loom" (`docs/guide/11-loom.md`), runnable:
//! `cargo run --example loom_check`.

fn main() {
    println!("loom_check");
}
