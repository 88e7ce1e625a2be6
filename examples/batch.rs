//! The guide's chapter "Batch processors" (`docs/guide/08-batch-processors.md`), runnable:
//! `cargo run --example batch`.

fn main() {
    println!("batch");
}
