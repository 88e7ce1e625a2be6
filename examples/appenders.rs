//! The guide's chapter "The main thread and appenders"
//! (`docs/guide/07-main-thread-and-appenders.md`), runnable:
//! `cargo run --example appenders`.
//!
//! A window that is not `Send` lives on the main thread. Recorders on the
//! pool append draw instances; a pinned two-point renderer records its own
//! overlay beside them and presents everything at its commit, on the main
//! thread, in plan order. A recorder that fails contributes nothing.

use std::cell::RefCell;
use std::rc::Rc;
use std::thread::{self, ThreadId};

use sluice::{Append, AppendBuffer, IterationError, NodeBuilder, NonSendMut, World};

/// One draw instance: who recorded it, and which.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Instance {
    by: &'static str,
    index: u32,
}

/// The window: an `Rc`, so neither `Send` nor `Sync`.
struct Window {
    presented: Rc<RefCell<Vec<Vec<Instance>>>>,
    present_threads: Vec<ThreadId>,
}

/// Makes the `units` recorder fail while set.
struct Broken(bool);

fn terrain(out: Append<Instance>) {
    out.extend((0..2).map(|index| Instance {
        by: "terrain",
        index,
    }));
}

fn units(out: Append<Instance>, broken: &Broken) {
    out.push(Instance {
        by: "units",
        index: 0,
    });
    // A thread the node starts itself: its values land after the node's own.
    thread::scope(|scope| {
        scope.spawn(|| {
            out.push(Instance {
                by: "units-thread",
                index: 0,
            })
        });
    });
    out.push(Instance {
        by: "units",
        index: 1,
    });
    assert!(!broken.0, "units: planned failure");
}

/// The renderer's first point: records the overlay beside the other recorders.
fn overlay(out: Append<Instance>) {
    out.push(Instance {
        by: "overlay",
        index: 0,
    });
}

/// The renderer's second point: drains every recorder's instances and
/// presents them on the window, on the main thread.
fn present(instances: &mut AppendBuffer<Instance>, mut window: NonSendMut<Window>) {
    let frame: Vec<Instance> = instances.drain().collect();
    window.presented.borrow_mut().push(frame);
    window.present_threads.push(thread::current().id());
}

fn by(frame: &[Instance]) -> Vec<&'static str> {
    frame.iter().map(|instance| instance.by).collect()
}

/// Keeps the planned panic's report off the output; any other panic reports as usual.
fn quiet_planned_panics() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let payload = info.payload();
        let message = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| payload.downcast_ref::<&str>().copied());
        let planned = message.is_some_and(|message| message.contains("planned failure"));
        if !planned {
            default(info);
        }
    }));
}

fn main() {
    quiet_planned_panics();
    let presented = Rc::new(RefCell::new(Vec::new()));
    let mut world = World::new();
    world.insert_non_send(Window {
        presented: Rc::clone(&presented),
        present_threads: Vec::new(),
    });
    world.insert(Broken(false));
    // Registered first, pinned at both points; its commit still runs after
    // every appender, wherever they were registered.
    world.add_system(
        NodeBuilder::new("renderer")
            .pinned()
            .system(overlay)
            .commit(present),
    );
    world.add_system(terrain);
    // After the other recorders, so they have all finished when it fails.
    world.add_system(
        NodeBuilder::new("units")
            .after("terrain")
            .after("renderer")
            .system(units),
    );

    let plan = world.plan().expect("plans");
    let order: Vec<&str> = plan.order().map(|node| plan.node_name(node)).collect();
    let pinned: Vec<&str> = plan
        .order()
        .filter(|&node| plan.is_pinned(node))
        .map(|node| plan.node_name(node))
        .collect();
    println!("plan order: {order:?}");
    println!("pinned to the main thread: {pinned:?}");
    assert_eq!(pinned, ["renderer", "renderer@commit"]);
    drop(plan);

    world.run_iteration().expect("frame 1");
    let first = presented.borrow()[0].clone();
    println!("frame 1 presented: {:?}", by(&first));
    // Plan order, then each node's push order, its own threads after it.
    assert_eq!(
        by(&first),
        [
            "overlay",
            "terrain",
            "terrain",
            "units",
            "units",
            "units-thread"
        ]
    );

    // A failed recorder: the commit never starts, and its values are dropped.
    world.insert(Broken(true));
    let failed = world.run_iteration().expect_err("units fails");
    assert!(matches!(failed, IterationError::NodePanicked(_)));
    println!("frame 2 failed: {failed}");
    assert_eq!(presented.borrow().len(), 1, "no present in a failed frame");
    world.insert(Broken(false));
    world.run_iteration().expect("frame 3");
    let third = presented.borrow()[1].clone();
    println!("frame 3 presented: {:?}", by(&third));
    // Frame 2's successful recorders first, then frame 3's; nothing of the failed `units`.
    assert_eq!(
        by(&third),
        [
            "overlay",
            "terrain",
            "terrain", // frame 2, carried
            "overlay",
            "terrain",
            "terrain",
            "units",
            "units",
            "units-thread",
        ]
    );

    // Both points ran on this thread in every frame.
    let main = thread::current().id();
    let window = world.get_non_send::<Window>().expect("on its own thread");
    assert!(window.present_threads.iter().all(|&id| id == main));
    println!(
        "presented {} frames, all on the main thread",
        window.present_threads.len()
    );

    // An unpinned node naming the window is refused before anything runs.
    world.add_system(NodeBuilder::new("sneaky").reads::<Window>().run(|_| {}));
    let Err(IterationError::Plan(errors)) = world.run_iteration() else {
        panic!("SL0011 expected");
    };
    let refused = errors
        .errors()
        .find(|d| d.code == "SL0011")
        .expect("SL0011");
    println!("refused: {}", refused.message);
    assert_eq!(refused.nodes, ["sneaky"]);
}
