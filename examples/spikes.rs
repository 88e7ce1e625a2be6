//! The guide's chapter "The spike watch" (`docs/guide/10-spike-watch.md`), runnable:
//! `cargo run --example spikes`.

fn main() {
    println!("spikes");
}
