//! Unit tests of `LockOnResizeArray` and its appender.

use super::*;
use std::sync::Arc;
use std::sync::atomic::AtomicUsize as StdAtomicUsize;
use std::thread;

const COUNT: usize = if cfg!(miri) { 50 } else { 100_000 };

#[test]
fn smoke() {
    let mut array = LockOnResizeArray::new();
    assert!(array.is_empty());
    assert_eq!(array.get(0), None);
    assert_eq!(array.push(10), 0);
    assert_eq!(array.push(11), 1);
    assert_eq!(array.len(), 2);
    assert_eq!(array.get(0), Some(&10));
    assert_eq!(array.get(1), Some(&11));
    assert_eq!(array.get(2), None);
    assert_eq!(array.get(usize::MAX), None);
    assert_eq!(format!("{array:?}"), "[10, 11]");
    array.iter_mut().for_each(|v| *v += 1);
    assert_eq!(array.iter().copied().collect::<Vec<_>>(), [11, 12]);
    array.clear();
    assert!(array.is_empty());
    assert_eq!(array.get(0), None);
    assert_eq!(array.push(5), 0);
    assert_eq!(array.drain().collect::<Vec<_>>(), [5]);
}

#[test]
fn capacity() {
    let array = LockOnResizeArray::with_capacity(3);
    assert_eq!(array.capacity(), 4); // rounded up, allocated at once
    let mut refs = Vec::new();
    for i in 0..4 {
        array.push(i);
    }
    assert_eq!(array.capacity(), 4);
    refs.push(array.get(0).unwrap());
    // Growth allocates a new segment; earlier references stay valid.
    array.push(4);
    assert_eq!(array.capacity(), 4 + 8);
    for i in 5..100 {
        array.push(i);
    }
    assert_eq!(array.capacity(), 4 + 8 + 16 + 32 + 64);
    assert_eq!(*refs[0], 0);
    assert!(array.iter().copied().eq(0..100));
    for i in 0..100 {
        assert_eq!(array.get(i), Some(&i));
    }
    let empty = LockOnResizeArray::<u8>::new();
    assert_eq!(empty.capacity(), 0);
    // The segment of an index near the top is past the last one.
    assert_eq!(empty.get(usize::MAX - 1), None);
}

#[test]
#[should_panic(expected = "at least 1")]
fn zero_capacity_panics() {
    let _ = LockOnResizeArray::<u8>::with_capacity(0);
}

#[test]
#[should_panic(expected = "capacity overflow")]
fn huge_capacity_panics() {
    let _ = LockOnResizeArray::<u8>::with_capacity(usize::MAX);
}

#[test]
fn locate() {
    let array = LockOnResizeArray::<u8>::with_base(4);
    assert_eq!(array.locate(0), Some((0, 0)));
    assert_eq!(array.locate(3), Some((0, 3)));
    assert_eq!(array.locate(4), Some((1, 0)));
    assert_eq!(array.locate(11), Some((1, 7)));
    assert_eq!(array.locate(12), Some((2, 0)));
    // The last slot of the last segment, then one past it.
    let last = (1usize << SEGMENTS) - 4 - 1;
    assert_eq!(
        array.locate(last),
        Some((SEGMENTS - 3, (1 << (SEGMENTS - 1)) - 1))
    );
    assert_eq!(array.locate(last + 1), None);
    assert_eq!(array.locate(usize::MAX), None);
}

#[test]
fn spsc() {
    // One appender, one reader that only ever sees complete values.
    let array = LockOnResizeArray::with_capacity(1);
    thread::scope(|s| {
        s.spawn(|| {
            for i in 0..COUNT {
                assert_eq!(array.push(i * 3), i);
            }
        });
        s.spawn(|| {
            let mut seen = 0;
            while seen < COUNT {
                if let Some(&v) = array.get(seen) {
                    assert_eq!(v, seen * 3);
                    seen += 1;
                } else {
                    thread::yield_now();
                }
            }
        });
    });
    assert_eq!(array.len(), COUNT);
}

#[test]
fn mpsc() {
    const THREADS: usize = 4;
    let mut array = LockOnResizeArray::with_capacity(1);
    let done = std::sync::atomic::AtomicBool::new(false);
    thread::scope(|s| {
        let writers: Vec<_> = (0..THREADS)
            .map(|t| {
                let array = &array;
                s.spawn(move || {
                    for i in 0..COUNT {
                        array.push(vec![t, i]);
                    }
                })
            })
            .collect();
        // Concurrent readers see only complete values.
        for _ in 0..2 {
            s.spawn(|| {
                while !done.load(std::sync::atomic::Ordering::Relaxed) {
                    for v in array.iter() {
                        assert_eq!(v.len(), 2);
                        assert!(v[0] < THREADS && v[1] < COUNT);
                    }
                }
            });
        }
        for w in writers {
            w.join().unwrap();
        }
        done.store(true, std::sync::atomic::Ordering::Relaxed);
    });
    assert_eq!(array.len(), THREADS * COUNT);
    let mut last = [None; THREADS];
    for v in array.iter_mut() {
        assert!(last[v[0]] < Some(v[1]));
        last[v[0]] = Some(v[1]);
    }
    assert_eq!(last, [Some(COUNT - 1); THREADS]);
    assert_eq!(array.drain().count(), THREADS * COUNT);
}

/// Counts its drops in a shared counter.
#[derive(Debug)]
struct Counted(Arc<StdAtomicUsize>);

impl Drop for Counted {
    fn drop(&mut self) {
        self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }
}

#[test]
fn drops() {
    let drops = Arc::new(StdAtomicUsize::new(0));
    let count = || drops.load(std::sync::atomic::Ordering::Relaxed);
    let mut array = LockOnResizeArray::with_capacity(2);
    for _ in 0..10 {
        array.push(Counted(drops.clone()));
    }
    array.clear();
    assert_eq!(count(), 10);
    for _ in 0..10 {
        array.push(Counted(drops.clone()));
    }
    // A partly consumed drain drops the rest.
    let mut drain = array.drain();
    drop(drain.next());
    assert_eq!(count(), 11);
    drop(drain);
    assert_eq!(count(), 20);
    assert!(array.is_empty());
    // A leaked drain leaves the untaken values to the array.
    for _ in 0..5 {
        array.push(Counted(drops.clone()));
    }
    let mut drain = array.drain();
    drop(drain.next());
    core::mem::forget(drain);
    assert_eq!(count(), 21);
    assert_eq!(array.get(0).map(|_| ()), None); // taken
    assert!(array.get(1).is_some());
    // Dropping the array drops what is left, concurrent pushes included.
    thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| {
                for _ in 0..10 {
                    array.push(Counted(drops.clone()));
                }
            });
        }
    });
    drop(array);
    assert_eq!(count(), 45);
}

#[test]
fn appender_smoke() {
    let mut array = LockOnResizeArray::with_capacity(1);
    let mut a = array.appender_with_chunk(3);
    // The first run, 0..3, spans segments 0 (index 0) and 1 (1..3).
    assert_eq!(a.push(10), 0);
    assert_eq!(array.push(99), 3); // a plain push lands after the run
    assert_eq!(a.push(11), 1);
    assert_eq!(a.push(12), 2);
    assert_eq!(a.push(13), 4); // the next run, 4..7
    assert_eq!(array.get(4), Some(&13));
    assert_eq!(array.len(), 7);
    assert!(format!("{a:?}").contains("next: 5"));
    let _ = a; // its run ends here, unfilled
    // 5 and 6 are holes: claimed, never written.
    assert_eq!(array.get(5), None);
    assert_eq!(array.get(6), None);
    assert_eq!(array.len(), 7);
    assert_eq!(
        array.iter().copied().collect::<Vec<_>>(),
        [10, 11, 12, 99, 13]
    );
    array.iter_mut().for_each(|v| *v += 1);
    assert_eq!(array.drain().collect::<Vec<_>>(), [11, 12, 13, 100, 14]);
    assert!(array.is_empty());
    // Holes are reused after the reset.
    let mut a = array.appender();
    for i in 0..200 {
        assert_eq!(a.push(i), i);
    }
    let _ = a;
    assert_eq!(array.len(), 256);
    assert!(array.iter().copied().eq(0..200));
    // An appender that never pushed claims nothing.
    let _ = array.appender();
    assert_eq!(array.len(), 256);
}

#[test]
#[should_panic(expected = "the chunk must be in")]
fn zero_chunk_panics() {
    let _ = LockOnResizeArray::<u8>::new().appender_with_chunk(0);
}

#[test]
#[should_panic(expected = "the chunk must be in")]
fn huge_chunk_panics() {
    let _ = LockOnResizeArray::<u8>::new()
        .appender_with_chunk(LockOnResizeArray::<u8>::MAX_APPENDER_CHUNK + 1);
}

#[test]
fn appender_drops() {
    let drops = Arc::new(StdAtomicUsize::new(0));
    let count = || drops.load(std::sync::atomic::Ordering::Relaxed);
    let mut array = LockOnResizeArray::with_capacity(2);
    // Appenders dropped with holes, a leaked one, and plain pushes.
    let mut a = array.appender_with_chunk(4);
    let mut b = array.appender_with_chunk(5);
    for _ in 0..7 {
        a.push(Counted(drops.clone()));
        b.push(Counted(drops.clone()));
        array.push(Counted(drops.clone()));
    }
    let _ = a;
    let _ = b; // no `Drop`: leaking an appender is the same as dropping it
    assert_eq!(array.iter().count(), 21);
    array.clear();
    assert_eq!(count(), 21);
    assert_eq!(array.get(0).map(|_| ()), None);
    let mut a = array.appender_with_chunk(3);
    for _ in 0..5 {
        a.push(Counted(drops.clone()));
    }
    let _ = a;
    let mut drain = array.drain();
    drop(drain.next());
    assert_eq!(count(), 22);
    drop(drain);
    assert_eq!(count(), 26);
    let mut a = array.appender();
    for _ in 0..3 {
        a.push(Counted(drops.clone()));
    }
    let _ = a;
    drop(array);
    assert_eq!(count(), 29);
}

#[test]
fn appenders_and_pushers() {
    // Two appenders and a plain pusher, with readers that only ever see
    // complete values; then each writer's values are in its own order.
    const WRITERS: usize = 3;
    let mut array = LockOnResizeArray::new();
    let done = std::sync::atomic::AtomicBool::new(false);
    thread::scope(|s| {
        let writers: Vec<_> = (0..WRITERS)
            .map(|t| {
                let array = &array;
                s.spawn(move || {
                    if t == 0 {
                        for i in 0..COUNT {
                            array.push(vec![t, i]);
                        }
                    } else {
                        let mut appender = array.appender_with_chunk(t * 7);
                        let mut last = None;
                        for i in 0..COUNT {
                            let index = appender.push(vec![t, i]);
                            assert!(last < Some(index));
                            last = Some(index);
                        }
                    }
                })
            })
            .collect();
        for _ in 0..2 {
            s.spawn(|| {
                while !done.load(std::sync::atomic::Ordering::Relaxed) {
                    for v in array.iter() {
                        assert_eq!(v.len(), 2);
                        assert!(v[0] < WRITERS && v[1] < COUNT);
                    }
                }
            });
        }
        for w in writers {
            w.join().unwrap();
        }
        done.store(true, std::sync::atomic::Ordering::Relaxed);
    });
    assert!(array.len() >= WRITERS * COUNT);
    let mut last = [None; WRITERS];
    for v in array.iter_mut() {
        assert!(last[v[0]] < Some(v[1]));
        last[v[0]] = Some(v[1]);
    }
    assert_eq!(last, [Some(COUNT - 1); WRITERS]);
    assert_eq!(array.drain().count(), WRITERS * COUNT);
}

#[test]
fn send_sync() {
    fn send<T: Send>() {}
    fn sync<T: Sync>() {}
    send::<LockOnResizeArray<Vec<u8>>>();
    sync::<LockOnResizeArray<Vec<u8>>>();
    send::<LockOnResizeArray<std::cell::Cell<u8>>>();
    send::<Appender<'_, Vec<u8>>>();
}
