//! The guide's chapter "The plan and `why`" (`docs/guide/02-the-plan.md`), runnable:
//! `cargo run --example plan`.

fn main() {
    println!("plan");
}
