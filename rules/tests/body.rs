//! SA0005: locks, `static mut` and `thread_local!` in a node body.

mod common;

use common::{check, codes, codes_of};
use quote::quote;
use sluice_rules::{BodyContext, Code, NodeKind, find_locks};
use syn::parse_quote;

#[test]
fn lock_calls_are_found() {
    let f = parse_quote! { fn a(s: &Shared) { let g = s.cache.lock().unwrap(); } };
    assert_eq!(codes_of(NodeKind::System, f), [Code::LockInBody]);
    let f = parse_quote! { fn a(s: &Shared) { if let Ok(g) = s.cache.try_lock() {} } };
    assert_eq!(codes_of(NodeKind::System, f), [Code::LockInBody]);
}

#[test]
fn rwlock_read_and_write_are_found() {
    let f = parse_quote! { fn a(s: &Shared) { let r = s.table.read().unwrap(); } };
    assert_eq!(codes_of(NodeKind::System, f), [Code::LockInBody]);
    let f = parse_quote! { fn a(s: &Shared) { *s.table.write().unwrap() = 3; } };
    assert_eq!(codes_of(NodeKind::System, f), [Code::LockInBody]);
    // a receiver named like a lock, even with arguments
    let f = parse_quote! { fn a(s: &Shared) { s.rw_lock.read(Ordering::Acquire); } };
    assert_eq!(codes_of(NodeKind::System, f), [Code::LockInBody]);
}

#[test]
fn io_read_and_write_with_arguments_are_not_locks() {
    let f = parse_quote! {
        fn a(s: &mut Files) {
            let n = s.file.read(&mut s.buf).unwrap();
            s.out.write(&s.buf[..n]).unwrap();
            s.out.write_all(b"x").unwrap();
            let locked = s.is_locked();
        }
    };
    assert_eq!(codes_of(NodeKind::System, f), []);
}

#[test]
fn creating_a_lock_is_found() {
    let f = parse_quote! { fn a(s: &Hp) { let m = std::sync::Mutex::new(0); } };
    assert_eq!(codes_of(NodeKind::System, f), [Code::LockInBody]);
    let f = parse_quote! { fn a(s: &Hp) { let m = RwLock::default(); } };
    assert_eq!(codes_of(NodeKind::System, f), [Code::LockInBody]);
    // a type merely named like one, and a local called `mutex`, are fine
    let f = parse_quote! { fn a(s: &Hp) { let mutex = MutexStats::new(); let m = mutex.count; } };
    assert_eq!(codes_of(NodeKind::System, f), []);
}

#[test]
fn static_mut_and_thread_local_are_found() {
    let f = parse_quote! { fn a(s: &Hp) { static mut COUNT: u32 = 0; } };
    assert_eq!(codes_of(NodeKind::System, f), [Code::LockInBody]);
    let f = parse_quote! { fn a(s: &Hp) { thread_local! { static X: u32 = 0; } } };
    assert_eq!(codes_of(NodeKind::System, f), [Code::LockInBody]);
    let f = parse_quote! { fn a(s: &Hp) { static COUNT: u32 = 0; let x = COUNT; } };
    assert_eq!(codes_of(NodeKind::System, f), []);
}

#[test]
fn locks_inside_closures_are_found() {
    let f = parse_quote! { fn a(s: &Shared) { s.items.iter().for_each(|i| { i.m.lock(); }); } };
    assert_eq!(codes_of(NodeKind::System, f), [Code::LockInBody]);
}

#[test]
fn locks_inside_macro_arguments_are_found() {
    let f = parse_quote! { fn a(s: &Shared) { println!("{:?}", s.cache.lock()); } };
    assert_eq!(codes_of(NodeKind::System, f), [Code::LockInBody]);
    let f = parse_quote! { fn a(s: &Shared) { println!("{:?}", s.cache.len()); } };
    assert_eq!(codes_of(NodeKind::System, f), []);
}

#[test]
fn a_known_static_mut_from_elsewhere_is_found() {
    let body: syn::Block = parse_quote!({
        unsafe {
            COUNTER += 1;
        }
    });
    let mut context = BodyContext::default();
    assert!(find_locks("a", &body, &context).is_empty());
    context.static_muts.insert("COUNTER".to_string());
    let found = find_locks("a", &body, &context);
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].message, "node `a` uses `static mut COUNTER`");
}

#[test]
fn allow_locks_opts_out() {
    let f: syn::ItemFn = parse_quote! { fn a(s: &Shared) { s.cache.lock(); } };
    let checked = check(
        NodeKind::System,
        quote!(allow_locks = "the C library needs it"),
        &f,
    );
    assert_eq!(codes(&checked), []);
    // an empty reason is itself an error and opts out of nothing
    let checked = check(NodeKind::System, quote!(allow_locks = ""), &f);
    assert_eq!(codes(&checked), [Code::InvalidAttribute, Code::LockInBody]);
}

#[test]
fn the_span_is_on_the_method_name() {
    let f: syn::ItemFn = syn::parse_str("fn a(s: &Shared) {\n    s.cache.lock();\n}").unwrap();
    let checked = check(NodeKind::System, Default::default(), &f);
    let start = checked.diagnostics[0].span.start();
    assert_eq!((start.line, start.column), (2, 12));
    assert!(checked.diagnostics[0].help.contains("allow_locks"));
}
