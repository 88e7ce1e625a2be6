//! The guide's chapter "Rendering a frame" (`docs/guide/17-rendering.md`),
//! runnable: `cargo run --example render`.
//!
//! Recorders append draw instances in parallel; a pinned, spike-exempt
//! two-point node commits on the main thread: it drains the instances,
//! rasterizes them into a framebuffer held by a non-`Send` window and
//! presents it, here as text. Two small armies march at each other.

use std::cell::RefCell;
use std::rc::Rc;

use sluice::{Append, AppendBuffer, IterationError, NodeBuilder, NonSendMut, Query, World};

const WIDTH: usize = 48;
const HEIGHT: usize = 12;

/// One thing to draw: a character at a cell.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Instance {
    x: f32,
    y: f32,
    glyph: char,
}

/// The window: an `Rc`, so neither `Send` nor `Sync`; it presents to stdout.
struct Window {
    frame: Rc<RefCell<Vec<char>>>,
    presented: u32,
}

struct Pos(f32, f32);
struct Vel(f32);
struct Team(u8);

fn march(mut units: Query<(&mut Pos, &Vel)>) {
    units.for_each(|(mut pos, vel)| pos.0 = (pos.0 + vel.0).clamp(0.0, (WIDTH - 1) as f32));
}

fn record_terrain(out: Append<Instance>) {
    for y in 0..HEIGHT {
        if y % 4 != 1 {
            out.push(Instance {
                x: (WIDTH / 2) as f32,
                y: y as f32,
                glyph: '#',
            });
        }
    }
}

fn record_units(mut units: Query<(&Pos, &Team)>, out: Append<Instance>) {
    units.par_for_each(|(pos, team)| {
        out.push(Instance {
            x: pos.0,
            y: pos.1,
            glyph: if team.0 == 0 { 'r' } else { 'b' },
        });
    });
}

/// The commit: every recorder has finished; only this thread holds the window.
fn present(instances: &mut AppendBuffer<Instance>, mut window: NonSendMut<Window>) {
    {
        let mut frame = window.frame.borrow_mut();
        frame.fill('.');
        for instance in instances.drain() {
            let (x, y) = (instance.x as usize, instance.y as usize);
            if x < WIDTH && y < HEIGHT {
                frame[y * WIDTH + x] = instance.glyph;
            }
        }
    }
    window.presented += 1;
}

fn main() -> Result<(), IterationError> {
    let mut world = World::new();
    world.insert_non_send(Window {
        frame: Rc::new(RefCell::new(vec!['.'; WIDTH * HEIGHT])),
        presented: 0,
    });
    world.spawn_batch((0..24u32).map(|seed| {
        let team = (seed % 2) as u8;
        let x = if team == 0 { 2.0 } else { (WIDTH - 3) as f32 };
        let speed = if team == 0 { 1.0 } else { -1.0 };
        (Pos(x, (seed / 2) as f32), Vel(speed), Team(team))
    }));
    world.add_system(march);
    world.add_system(
        NodeBuilder::new("render")
            .pinned()
            .spike_exempt()
            .system(|| {})
            .commit(present),
    );
    world.add_system(record_terrain);
    world.add_system(record_units);
    for _ in 0..3 {
        for _ in 0..6 {
            world.run_iteration()?;
        }
        let window = world.get_non_send::<Window>().expect("on this thread");
        println!("after {} frames:", window.presented);
        for row in window.frame.borrow().chunks(WIDTH) {
            println!("  {}", row.iter().collect::<String>());
        }
    }
    let plan = world.plan()?;
    let names: Vec<&str> = plan.order().map(|node| plan.node_name(node)).collect();
    println!("plan order: {}", names.join(", "));
    Ok(())
}
