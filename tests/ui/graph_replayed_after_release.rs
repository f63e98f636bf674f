// A CUDA graph captured over an arena replays only with that arena in hand: once the arena is
// released (`release` takes it by value), a replay does not compile, where a cudarc
// `CudaGraph` would replay into freed memory.
use arena_runtime::{Allocated, ArenaGraph, CudaDevice};
use arena_spec::BufferArena;

fn step(mut arena: Allocated<BufferArena, CudaDevice>, graph: ArenaGraph<BufferArena>) {
    graph.replay(&mut arena).unwrap();
    arena.release().unwrap();
    graph.replay(&mut arena).unwrap();
}

fn main() {}
