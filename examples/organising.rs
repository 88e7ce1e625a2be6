//! The guide's chapter "Organising a frame" (`docs/guide/03-organising-a-frame.md`), runnable:
//! `cargo run --example organising`.

fn main() {
    println!("organising");
}
