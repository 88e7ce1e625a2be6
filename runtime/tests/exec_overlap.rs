//! Two nodes with no edge between them run at the same time, on different
//! threads, on the parallel executor (issue 20): each body waits at a
//! rendezvous of two with a timeout, so serialised bodies fail the test
//! instead of hanging it.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::{self, ThreadId};
use std::time::{Duration, Instant};

use sluice::exec::ThreadPool;
use sluice::{ExecutorKind, NodeBuilder, World};

/// How long a body waits for the other before giving up: far longer than
/// two ready jobs take to be picked up by two idle threads.
const PATIENCE: Duration = Duration::from_secs(10);

/// A rendezvous of two: each arrival waits until both have arrived or
/// `PATIENCE` passed; whether both met, and on which thread each arrived.
#[derive(Default)]
struct Rendezvous {
    arrived: AtomicUsize,
    threads: Mutex<Vec<ThreadId>>,
    met: AtomicUsize,
}

impl Rendezvous {
    fn arrive(&self) {
        self.threads.lock().unwrap().push(thread::current().id());
        self.arrived.fetch_add(1, Ordering::AcqRel);
        let deadline = Instant::now() + PATIENCE;
        while self.arrived.load(Ordering::Acquire) < 2 {
            if Instant::now() > deadline {
                return;
            }
            thread::sleep(Duration::from_micros(100));
        }
        self.met.fetch_add(1, Ordering::AcqRel);
    }
}

#[derive(Debug, Default)]
struct Left(u32);
#[derive(Debug, Default)]
struct Right(u32);

#[test]
fn unordered_nodes_run_at_once_on_two_threads() {
    for threads in [2, 4] {
        let mut world = World::with_pool(ThreadPool::new(threads).expect("pool"));
        world.set_executor(ExecutorKind::Parallel);
        world.insert(Left::default());
        world.insert(Right::default());
        let meeting = Arc::new(Rendezvous::default());
        let (left_meeting, right_meeting) = (meeting.clone(), meeting.clone());
        let left = world.add_system(NodeBuilder::new("left").system(move |left: &mut Left| {
            left.0 += 1;
            left_meeting.arrive();
        }));
        let right = world.add_system(NodeBuilder::new("right").system(move |right: &mut Right| {
            right.0 += 1;
            right_meeting.arrive();
        }));
        let plan = world.plan().unwrap();
        assert!(
            plan.edge_between(left, right).is_none() && plan.edge_between(right, left).is_none(),
            "no edge between them"
        );
        world.run_iteration().unwrap();
        assert_eq!(
            meeting.met.load(Ordering::Acquire),
            2,
            "both bodies were inside at once ({threads} threads)"
        );
        let seen = meeting.threads.lock().unwrap();
        assert_eq!(seen.len(), 2);
        assert_ne!(seen[0], seen[1], "on two threads");
        assert_eq!(
            (
                world.get::<Left>().unwrap().0,
                world.get::<Right>().unwrap().0
            ),
            (1, 1)
        );
    }
}
