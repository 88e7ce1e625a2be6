//! Loom models of the concurrent structures: every interleaving of a few
//! threads over the real code, with loom's atomics and cells swapped in by
//! the crate's `sync` shim.
//!
//! Run with
//! `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=2 cargo test -p sluice-collections --release --test loom`.
//! Each section is one structure's `mod`.

#![cfg(loom)]

mod lock_on_resize_array {
    use loom::sync::Arc;
    use loom::thread;
    use sluice_collections::LockOnResizeArray;

    // Readers run on threads spawned after the appenders rather than on the
    // main thread: loom's dependency tracking only backtracks a load that
    // comes after the store it races, so a reader that ran first would hide
    // the race behind the appender's own loads.

    /// Two appenders race to grow past a one-slot first segment while a
    /// reader reads the index the growth creates.
    #[test]
    fn two_appenders_race_growth() {
        loom::model(|| {
            let array = Arc::new(LockOnResizeArray::with_capacity(1));
            let appenders: Vec<_> = [1usize, 2]
                .into_iter()
                .map(|v| {
                    let array = array.clone();
                    thread::spawn(move || array.push(v))
                })
                .collect();
            let reader = {
                let array = array.clone();
                thread::spawn(move || {
                    // A value read during the race is complete.
                    if let Some(&v) = array.get(1) {
                        assert!(v == 1 || v == 2);
                    }
                })
            };
            let indices: Vec<_> = appenders.into_iter().map(|h| h.join().unwrap()).collect();
            reader.join().unwrap();
            let mut sorted = indices.clone();
            sorted.sort();
            assert_eq!(sorted, [0, 1]);
            assert_eq!(array.get(indices[0]), Some(&1));
            assert_eq!(array.get(indices[1]), Some(&2));
            let mut array = Arc::try_unwrap(array).unwrap();
            assert_eq!(array.capacity(), 1 + 2);
            let mut items: Vec<_> = array.drain().collect();
            items.sort();
            assert_eq!(items, [1, 2]);
        });
    }

    /// A reader racing one append sees nothing or the whole value.
    #[test]
    fn reader_races_append() {
        loom::model(|| {
            let array = Arc::new(LockOnResizeArray::with_capacity(1));
            let writer = {
                let array = array.clone();
                thread::spawn(move || {
                    array.push(vec![7u8]);
                })
            };
            let reader = {
                let array = array.clone();
                thread::spawn(move || {
                    if let Some(v) = array.get(0) {
                        assert_eq!(v, &[7]);
                    }
                })
            };
            writer.join().unwrap();
            reader.join().unwrap();
            assert_eq!(array.get(0).map(Vec::as_slice), Some(&[7u8][..]));
        });
    }

    /// A reader racing an append that has to allocate a new segment.
    #[test]
    fn reader_races_growth() {
        loom::model(|| {
            let array = Arc::new(LockOnResizeArray::with_capacity(1));
            array.push(vec![0u8]);
            let writer = {
                let array = array.clone();
                thread::spawn(move || array.push(vec![1u8]))
            };
            let reader = {
                let array = array.clone();
                thread::spawn(move || {
                    if let Some(v) = array.get(1) {
                        assert_eq!(v, &[1]);
                    }
                    // Index 0 stays readable while the array grows.
                    assert_eq!(array.get(0).map(Vec::as_slice), Some(&[0u8][..]));
                })
            };
            assert_eq!(writer.join().unwrap(), 1);
            reader.join().unwrap();
            assert_eq!(array.iter().cloned().collect::<Vec<_>>(), [[0], [1]]);
        });
    }

    /// Two appenders with runs of two race to grow past a one-slot first
    /// segment (runs 0..2 and 2..4 span segments 0, 1 and 2) while a reader
    /// reads an index in the new segment; one appender leaves a hole.
    #[test]
    fn two_appenders_with_runs_race_growth() {
        loom::model(|| {
            let array = Arc::new(LockOnResizeArray::with_capacity(1));
            let appenders: Vec<_> = [(1u8, 2usize), (3, 1)]
                .into_iter()
                .map(|(first, pushes)| {
                    let array = array.clone();
                    thread::spawn(move || {
                        let mut appender = array.appender_with_chunk(2);
                        (0..pushes as u8)
                            .map(|i| appender.push(vec![first + i]))
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            let reader = {
                let array = array.clone();
                thread::spawn(move || {
                    // A value read during the race is complete.
                    if let Some(v) = array.get(2) {
                        assert!(v == &[1] || v == &[3]);
                    }
                })
            };
            let indices: Vec<_> = appenders.into_iter().map(|h| h.join().unwrap()).collect();
            reader.join().unwrap();
            // Each appender's indices are one run, ascending.
            let (a, b) = (&indices[0], &indices[1]);
            assert_eq!(a[1], a[0] + 1);
            assert!(a[0] % 2 == 0 && b[0] % 2 == 0 && a[0] != b[0]);
            let mut array = Arc::try_unwrap(array).unwrap();
            assert_eq!(array.len(), 4);
            // The hole (the second slot of the one-push run) reads as `None`
            // and is skipped.
            assert_eq!(array.get(b[0] + 1), None);
            let mut items: Vec<_> = array.drain().collect();
            items.sort();
            assert_eq!(items, [[1], [2], [3]]);
        });
    }
}

mod append_arena {
    use loom::sync::Arc;
    use loom::thread;
    use sluice_collections::AppendArena;

    /// Two appenders fill a two-slot arena, a third push is refused, then the
    /// owner drains both values.
    #[test]
    fn two_appenders_then_drain() {
        loom::model(|| {
            let arena = Arc::new(AppendArena::with_capacity(2));
            let handles: Vec<_> = [1usize, 2]
                .into_iter()
                .map(|v| {
                    let arena = arena.clone();
                    thread::spawn(move || arena.push(v).unwrap())
                })
                .collect();
            let slots: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
            assert_ne!(slots[0], slots[1]);
            let mut arena = Arc::try_unwrap(arena).unwrap();
            assert_eq!(arena.push(3).unwrap_err().into_inner(), 3);
            assert_eq!(arena.len(), 2);
            let mut items: Vec<_> = arena.drain().collect();
            items.sort();
            assert_eq!(items, [1, 2]);
            assert!(arena.is_empty());
        });
    }

    /// Two appenders race for the one slot: exactly one wins, the other gets
    /// its value back, and the tail's overshoot does not show in `len`.
    #[test]
    fn two_appenders_race_for_last_slot() {
        loom::model(|| {
            let arena = Arc::new(AppendArena::with_capacity(1));
            let handles: Vec<_> = [1usize, 2]
                .into_iter()
                .map(|v| {
                    let arena = arena.clone();
                    thread::spawn(move || arena.push(v).is_ok())
                })
                .collect();
            let won: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
            assert_eq!(won.iter().filter(|&&w| w).count(), 1);
            let mut arena = Arc::try_unwrap(arena).unwrap();
            assert_eq!(arena.len(), 1);
            let items: Vec<_> = arena.drain().collect();
            assert_eq!(items, [if won[0] { 1 } else { 2 }]);
        });
    }

    /// Two appenders with runs of two at a three-slot arena's capacity: one
    /// gets the run 0..2, the other the short run 2..3; the first pushes once
    /// and leaves a hole, the second pushes twice and gets its second value
    /// back. The drain squeezes the hole out and yields every accepted value
    /// once.
    #[test]
    fn two_appenders_at_capacity_then_drain() {
        loom::model(|| {
            let arena = Arc::new(AppendArena::with_capacity(3));
            let handles: Vec<_> = [(vec![1u8], 1usize), (vec![2], 2)]
                .into_iter()
                .map(|(value, pushes)| {
                    let arena = arena.clone();
                    thread::spawn(move || {
                        let mut appender = arena.appender_with_chunk(2);
                        let mut accepted = Vec::new();
                        for i in 0..pushes as u8 {
                            let v = vec![value[0], i];
                            match appender.push(v.clone()) {
                                Ok(_) => accepted.push(v),
                                Err(back) => assert_eq!(back.into_inner(), v),
                            }
                        }
                        accepted
                    })
                })
                .collect();
            let mut accepted: Vec<_> = handles
                .into_iter()
                .flat_map(|h| h.join().unwrap())
                .collect();
            let mut arena = Arc::try_unwrap(arena).unwrap();
            assert_eq!(arena.len(), 3);
            let mut items: Vec<_> = arena.drain().collect();
            items.sort();
            accepted.sort();
            assert_eq!(items, accepted);
            // Either 1 + 2 (first run to the one-push appender: a hole at 1,
            // the other's second push refused) or 2 + 1.
            assert!(items.len() == 2 || items.len() == 3);
            assert!(arena.is_empty());
        });
    }
}

mod mpsc {
    use loom::thread;
    use sluice_collections::mpsc::bounded;

    /// Two producers and the consumer at `capacity`: every value arrives once,
    /// each producer's in order, and a full queue refuses.
    fn two_producers(capacity: usize) {
        loom::model(move || {
            let (tx, mut rx) = bounded::<(usize, usize)>(capacity);
            let handles: Vec<_> = (0..2)
                .map(|p| {
                    let tx = tx.clone();
                    thread::spawn(move || {
                        // One attempt per value: a full queue hands it back.
                        let mut sent = 0;
                        for i in 0..2 {
                            match tx.push((p, i)) {
                                Ok(()) => sent += 1,
                                Err(back) => assert_eq!(back, (p, i)),
                            }
                        }
                        sent
                    })
                })
                .collect();
            drop(tx);
            let mut got = Vec::new();
            for _ in 0..2 {
                if let Some(v) = rx.pop() {
                    got.push(v);
                }
            }
            let sent: usize = handles.into_iter().map(|h| h.join().unwrap()).sum();
            while let Some(v) = rx.pop() {
                got.push(v);
            }
            assert_eq!(got.len(), sent);
            assert!(sent >= capacity.min(4));
            for p in 0..2 {
                let mine: Vec<_> = got.iter().filter(|v| v.0 == p).map(|v| v.1).collect();
                assert!(mine.windows(2).all(|w| w[0] < w[1]));
            }
            assert_eq!(rx.pop(), None);
        });
    }

    #[test]
    fn two_producers_capacity_1() {
        two_producers(1);
    }

    /// A drain while two producers push: it takes each value once, each
    /// producer's in order, and what it leaves the next drain takes.
    #[test]
    fn drain_while_pushing() {
        loom::model(|| {
            let (tx, mut rx) = bounded::<(usize, usize)>(2);
            let handles: Vec<_> = (0..2)
                .map(|p| {
                    let tx = tx.clone();
                    thread::spawn(move || (0..2).filter(|&i| tx.push((p, i)).is_ok()).count())
                })
                .collect();
            drop(tx);
            let mut got: Vec<_> = rx.drain().collect();
            let sent: usize = handles.into_iter().map(|h| h.join().unwrap()).sum();
            got.extend(rx.drain());
            assert_eq!(got.len(), sent);
            for p in 0..2 {
                let mine: Vec<_> = got.iter().filter(|v| v.0 == p).map(|v| v.1).collect();
                assert!(mine.windows(2).all(|w| w[0] < w[1]));
            }
            assert_eq!(rx.pop(), None);
        });
    }

    #[test]
    fn two_producers_capacity_2() {
        two_producers(2);
    }

    /// One producer wraps a one-cell queue while the consumer takes: the
    /// cell is reused only after its value was read.
    #[test]
    fn full_and_empty_boundaries() {
        loom::model(|| {
            let (tx, mut rx) = bounded::<Vec<u8>>(1);
            let producer = thread::spawn(move || {
                let mut pushed = 0;
                for i in 0..3u8 {
                    let mut v = vec![i];
                    loop {
                        match tx.push(v) {
                            Ok(()) => break,
                            Err(back) => {
                                v = back;
                                thread::yield_now();
                            }
                        }
                    }
                    pushed += 1;
                }
                pushed
            });
            let mut next = 0u8;
            while next < 3 {
                match rx.pop() {
                    Some(v) => {
                        assert_eq!(v, [next]);
                        next += 1;
                    }
                    None => thread::yield_now(),
                }
            }
            assert_eq!(producer.join().unwrap(), 3);
            assert_eq!(rx.pop(), None);
        });
    }

    /// Values left in the queue are dropped once, whichever handle goes last.
    #[test]
    fn drop_with_items_left() {
        use loom::sync::Arc;
        use loom::sync::atomic::{AtomicUsize, Ordering};

        struct Counted(Arc<AtomicUsize>);
        impl Drop for Counted {
            fn drop(&mut self) {
                self.0.fetch_add(1, Ordering::Relaxed);
            }
        }

        loom::model(|| {
            let drops = Arc::new(AtomicUsize::new(0));
            let (tx, mut rx) = bounded::<Counted>(2);
            let producer = {
                let drops = drops.clone();
                thread::spawn(move || {
                    for _ in 0..2 {
                        let _ = tx.push(Counted(drops.clone()));
                    }
                    // `tx` goes here, racing the consumer's drop.
                })
            };
            drop(rx.pop());
            drop(rx);
            producer.join().unwrap();
            assert_eq!(drops.load(Ordering::Relaxed), 2);
        });
    }
}

mod ledger_map {
    use loom::sync::Arc;
    use loom::thread;
    use sluice_collections::LedgerMap;

    /// Two recorders race across a block boundary (blocks hold two writes
    /// under loom, and the main thread has filled the first slot), so one of
    /// them installs the next block while the other may write into it. After
    /// the join, `apply` lands every write, each thread's in its own order.
    #[test]
    fn ledger_recorders_race() {
        loom::model(|| {
            let map = LedgerMap::<u8, u8>::new();
            map.insert(0, 0);
            let map = Arc::new(map);
            let a = {
                let map = map.clone();
                thread::spawn(move || {
                    map.insert(1, 1);
                    map.insert(1, 2);
                })
            };
            let b = {
                let map = map.clone();
                thread::spawn(move || map.insert(1, 3))
            };
            a.join().unwrap();
            b.join().unwrap();
            let mut map = Arc::try_unwrap(map).unwrap();
            assert_eq!(map.pending(), 4);
            assert_eq!(map.get(&1), None);
            assert_eq!(map.apply(), 4);
            assert_eq!(map.get(&0), Some(&0));
            // Thread a's second write or thread b's, never a's first.
            let last = *map.get(&1).unwrap();
            assert!(last == 2 || last == 3, "{last}");
            assert_eq!(map.len(), 2);
        });
    }

    /// A reader racing two recorders (each thread spawned, so loom explores
    /// their interleavings) sees the map as it was, whatever they have
    /// recorded; the writes appear at `apply`.
    #[test]
    fn ledger_readers_see_the_old_map() {
        loom::model(|| {
            let mut map = LedgerMap::<u8, u8>::new();
            map.insert(1, 10);
            map.apply();
            let map = Arc::new(map);
            let recorders: Vec<_> = [(1, 20), (2, 30)]
                .into_iter()
                .map(|(k, v)| {
                    let map = map.clone();
                    thread::spawn(move || {
                        map.insert(k, v);
                        map.remove(&1);
                    })
                })
                .collect();
            let reader = {
                let map = map.clone();
                thread::spawn(move || {
                    for _ in 0..2 {
                        assert_eq!(map.get(&1), Some(&10));
                        assert_eq!(map.get(&2), None);
                        assert_eq!(map.len(), 1);
                        assert!(map.pending() <= 4);
                        thread::yield_now();
                    }
                })
            };
            for recorder in recorders {
                recorder.join().unwrap();
            }
            reader.join().unwrap();
            let mut map = Arc::try_unwrap(map).unwrap();
            assert_eq!(map.apply(), 4);
            // Each thread removed key 1 after its own insert.
            assert_eq!(map.get(&1), None);
            assert_eq!(map.get(&2), Some(&30));
        });
    }
}

mod pool {
    use loom::sync::Arc;
    use loom::thread;
    use sluice_collections::{Pool, Pooled};

    /// A pooled buffer.
    #[derive(Default)]
    struct Buf(Vec<usize>);

    impl Pooled for Buf {
        fn reset(&mut self) {
            self.0.clear();
        }
    }

    /// Two threads take and give back through a one-value pool stocked with
    /// one buffer: a buffer one gives back may be the one the other takes,
    /// and it arrives reset and whole.
    #[test]
    fn pool_two_threads_take_and_give_back() {
        loom::model(|| {
            let pool = Arc::new(Pool::<Buf>::new(1));
            pool.give_back(Buf(Vec::with_capacity(4)));
            let threads: Vec<_> = (0..2)
                .map(|t| {
                    let pool = pool.clone();
                    thread::spawn(move || {
                        let mut buf = pool.take();
                        assert!(buf.0.is_empty());
                        buf.0.push(t);
                    })
                })
                .collect();
            for thread in threads {
                thread.join().unwrap();
            }
            // One of the two give-backs always fits.
            assert_eq!(pool.idle(), 1);
            assert!(pool.take().0.is_empty());
        });
    }
}
