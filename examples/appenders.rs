//! The guide's chapter "The main thread and appenders" (`docs/guide/07-main-thread-and-appenders.md`), runnable:
//! `cargo run --example appenders`.

fn main() {
    println!("appenders");
}
