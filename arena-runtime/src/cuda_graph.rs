//! [`ArenaGraph`]: a CUDA graph captured over an arena, replayed only with that arena in hand.
//!
//! A captured graph records the addresses its kernels read and write; cudarc's `CudaGraph`
//! keeps no borrow of the memory behind them, so one replayed after its arena was released
//! writes freed memory. An `ArenaGraph` takes the arena at every replay instead of holding a
//! borrow between replays (which would keep the engine from writing the next step's inputs
//! into the arena): `Allocated::release` takes the arena by value, so a replay after it does
//! not compile, and an arena of other allocations is refused.

use crate::allocated::{Allocated, Allocation};
use crate::arena::Arena;
use crate::CudaDevice;
use core::marker::PhantomData;
use cudarc::driver::{sys, CudaGraph, CudaStream};
use std::sync::Arc;

/// Why capturing or replaying an [`ArenaGraph`] failed.
#[derive(Debug, thiserror::Error)]
pub enum GraphError<E = core::convert::Infallible> {
    /// The captured step failed; the capture was ended and its graph dropped.
    #[error("the captured step failed: {0}")]
    Step(E),
    /// The step launched nothing on the stream.
    #[error("the capture recorded nothing")]
    Empty,
    /// Replayed with an arena other than the one it was captured over.
    #[error("a graph captured over one `{arena}` replayed with another (other allocations)")]
    OtherArena { arena: &'static str },
    /// The driver refused a capture, instantiation, upload or launch.
    #[error("CUDA graph: {0}")]
    Driver(String),
}

fn driver<E>(e: cudarc::driver::DriverError) -> GraphError<E> {
    GraphError::Driver(e.to_string())
}

/// A CUDA graph of work launched over the arena `A`, instantiated and ready to replay.
pub struct ArenaGraph<A: Arena> {
    graph: CudaGraph,
    /// The arena's allocations when captured: the addresses the graph recorded.
    allocations: Vec<Allocation>,
    _arena: PhantomData<fn() -> A>,
}

impl<A: Arena> ArenaGraph<A> {
    /// Captures what `step` launches on `stream` with `arena` lent to it (thread-local
    /// capture: other threads' CUDA calls are not recorded), and instantiates the graph. A
    /// step that fails, or records nothing, ends the capture and returns its error. What the
    /// step must not do while captured is CUDA's rule: no allocation, no synchronisation, no
    /// copy from pageable host memory; keep cuBLAS's workspace set before the capture.
    pub fn capture<E>(
        stream: &Arc<CudaStream>,
        arena: &mut Allocated<A, CudaDevice>,
        step: impl FnOnce(&mut Allocated<A, CudaDevice>) -> Result<(), E>,
    ) -> Result<Self, GraphError<E>> {
        stream
            .begin_capture(sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)
            .map_err(driver)?;
        let ran = step(arena);
        // Ended whatever the step did, so the stream leaves capture mode.
        let graph = stream.end_capture(sys::CUgraphInstantiate_flags(0));
        ran.map_err(GraphError::Step)?;
        let graph = graph.map_err(driver)?.ok_or(GraphError::Empty)?;
        Ok(ArenaGraph {
            graph,
            allocations: arena.allocations().to_vec(),
            _arena: PhantomData,
        })
    }

    /// Launches the graph on the stream it was captured on, over `arena`, which must be the
    /// arena it was captured over (its allocations; else [`GraphError::OtherArena`]). Taken
    /// mutably: the graph writes its buffers, as the step did.
    pub fn replay(&self, arena: &mut Allocated<A, CudaDevice>) -> Result<(), GraphError> {
        if arena.allocations() != self.allocations.as_slice() {
            return Err(GraphError::OtherArena { arena: A::NAME });
        }
        self.graph.launch().map_err(driver)
    }

    /// Uploads the graph's resources to the device before its first replay.
    pub fn upload(&self) -> Result<(), GraphError> {
        self.graph.upload().map_err(driver)
    }

    /// The graph's nodes (kernels, copies, fills): what the whole-GPU plan's graph memory is
    /// reckoned from (`GpuPlanInputs::graph_nodes` in arena-spec).
    pub fn nodes(&self) -> Result<usize, GraphError> {
        let mut nodes = 0usize;
        // SAFETY: the graph is live (owned by `self.graph`); a NULL node array asks only
        // for the count.
        unsafe { sys::cuGraphGetNodes(self.graph.cu_graph(), core::ptr::null_mut(), &mut nodes) }
            .result()
            .map_err(driver)?;
        Ok(nodes)
    }
}
