//! `CudaDevice`: the arena on a real GPU through cudarc's driver API.
//!
//! libcuda is loaded at run time (cudarc's `dynamic-loading`), so this builds and the CPU
//! tests run without CUDA; [`CudaDevice::available`] says whether a GPU can be used.

use crate::device::{Device, MemInfo};
use crate::dtype::Element;
use crate::error::DeviceError;
use crate::ptr::DevicePtr;
use crate::view::{View, ViewMut};
use cudarc::driver::{
    result, sys, CudaContext, CudaStream, DevicePtr as DevicePtrTrait, DevicePtrMut, DeviceSlice,
    DriverError, LaunchArgs, PushKernelArg, SyncOnDrop,
};
use std::sync::Arc;

// A `DevicePtr<T>` is a kernel argument as it is: `launch.arg(&ptr)` passes its address, the
// `T*` the kernel declares, and nothing else, as cudarc passes a `CudaSlice<T>`. It is not
// `DeviceRepr` on purpose: that bound also admits `clone_htod(&[ptr, ...])`, which would
// upload address and length pairs where a `T**` kernel reads addresses; build such a table
// with `DevicePtr::address_table` instead.
//
// SAFETY: the pushed reference points at the pointer's 8-byte address field, a `u64`
// (`CUdeviceptr`) that lives as long as the borrow `'b`, which outlives the launch `'a`.
unsafe impl<'a, 'b: 'a, T> PushKernelArg<&'b DevicePtr<T>> for LaunchArgs<'a> {
    #[inline(always)]
    fn arg(&mut self, arg: &'b DevicePtr<T>) -> &mut Self {
        self.arg(arg.address_ref())
    }
}

// Views at a launch: the address alone, as for `DevicePtr` (and as cudarc pushes a
// `CudaView`), without cudarc's event tracking: the arena has one allocation and orders
// nothing; the engine orders its own work.
//
// SAFETY: (this impl and the two below) the pushed reference points at the view's pointer's
// 8-byte address field, borrowed for `'b`, which outlives the launch `'a`.
unsafe impl<'a, 'b: 'a, 'c: 'b, T> PushKernelArg<&'b View<'c, T, CudaDevice>> for LaunchArgs<'a> {
    #[inline(always)]
    fn arg(&mut self, arg: &'b View<'c, T, CudaDevice>) -> &mut Self {
        self.arg(arg.ptr_ref().address_ref())
    }
}
// SAFETY: as above.
unsafe impl<'a, 'b: 'a, 'c: 'b, T> PushKernelArg<&'b ViewMut<'c, T, CudaDevice>>
    for LaunchArgs<'a>
{
    #[inline(always)]
    fn arg(&mut self, arg: &'b ViewMut<'c, T, CudaDevice>) -> &mut Self {
        self.arg(arg.ptr_ref().address_ref())
    }
}
// SAFETY: as above.
unsafe impl<'a, 'b: 'a, 'c: 'b, T> PushKernelArg<&'b mut ViewMut<'c, T, CudaDevice>>
    for LaunchArgs<'a>
{
    #[inline(always)]
    fn arg(&mut self, arg: &'b mut ViewMut<'c, T, CudaDevice>) -> &mut Self {
        self.arg(arg.ptr_ref().address_ref())
    }
}

/// cudarc's device-slice traits for the views of an arena on a `CudaDevice`, for element `$elem`
/// of views of `$t` (the arena's own type, or cudarc's `half` type of the same bits):
/// `memcpy_htod` / `memcpy_dtoh` / `memcpy_dtod`, `memset_zeros` and cuBLAS take them. The
/// `SyncOnDrop` is empty: the arena records no events (cudarc's tracking follows its own
/// `CudaSlice`s); the engine orders work across its streams itself.
macro_rules! device_slice_impls {
    (impl<$($g:ident),*> $elem:ty => $t:ty) => {
        impl<$($g: Element),*> DeviceSlice<$elem> for View<'_, $t, CudaDevice> {
            fn len(&self) -> usize {
                View::len(self)
            }
            fn stream(&self) -> &Arc<CudaStream> {
                self.device().stream()
            }
        }
        impl<$($g: Element),*> DevicePtrTrait<$elem> for View<'_, $t, CudaDevice> {
            fn device_ptr<'s>(&'s self, _stream: &'s CudaStream) -> (sys::CUdeviceptr, SyncOnDrop<'s>) {
                (self.as_raw(), SyncOnDrop::Sync(None))
            }
        }
        impl<$($g: Element),*> DeviceSlice<$elem> for ViewMut<'_, $t, CudaDevice> {
            fn len(&self) -> usize {
                ViewMut::len(self)
            }
            fn stream(&self) -> &Arc<CudaStream> {
                self.device().stream()
            }
        }
        impl<$($g: Element),*> DevicePtrTrait<$elem> for ViewMut<'_, $t, CudaDevice> {
            fn device_ptr<'s>(&'s self, _stream: &'s CudaStream) -> (sys::CUdeviceptr, SyncOnDrop<'s>) {
                (self.as_raw(), SyncOnDrop::Sync(None))
            }
        }
        impl<$($g: Element),*> DevicePtrMut<$elem> for ViewMut<'_, $t, CudaDevice> {
            fn device_ptr_mut<'s>(
                &'s mut self,
                _stream: &'s CudaStream,
            ) -> (sys::CUdeviceptr, SyncOnDrop<'s>) {
                (self.as_raw(), SyncOnDrop::Sync(None))
            }
        }
    };
}

device_slice_impls!(impl<T> T => T);
device_slice_impls!(impl<> half::bf16 => crate::dtype::bf16);
device_slice_impls!(impl<> half::f16 => crate::dtype::f16);

/// Device memory of one CUDA context, and the stream its fills and copies are ordered on.
/// Allocations are plain `cuMemAlloc`s made in that context, so an engine that owns a
/// context (or a stream) allocates its arena in it.
///
/// The stream: `fill` (poison mode) is an asynchronous `cuMemsetD8Async` on it, so it lands
/// between the kernels the engine launches on that stream and may be recorded in a stream
/// capture; `write` and `read` (guard bands, tests) copy on it and wait for it. Made with
/// [`Self::from_stream`] it is the engine's stream; with [`Self::new`] or
/// [`Self::from_context`] it is the context's default stream. The arena synchronises nothing
/// else: a multi-stream engine orders its own work, and `Allocated::poison_phase_on` fills on
/// another stream.
#[derive(Debug, Clone)]
pub struct CudaDevice {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
}

fn driver(e: DriverError) -> DeviceError {
    DeviceError::Driver(e.to_string())
}

impl CudaDevice {
    /// True when libcuda loads and reports at least one device.
    pub fn available() -> bool {
        // SAFETY: only probes whether the library can be loaded.
        if !unsafe { sys::is_culib_present() } {
            return false;
        }
        CudaContext::device_count().is_ok_and(|n| n > 0)
    }

    /// How many devices the driver reports; 0 without a driver.
    pub fn count() -> Result<usize, DeviceError> {
        if !Self::available() {
            return Ok(0);
        }
        let n = CudaContext::device_count().map_err(driver)?;
        Ok(usize::try_from(n).unwrap_or(0))
    }

    /// The primary context of device `ordinal`, with its default stream.
    pub fn new(ordinal: usize) -> Result<Self, DeviceError> {
        if !Self::available() {
            return Err(DeviceError::Driver("no CUDA driver or device found".into()));
        }
        Ok(Self::from_context(
            CudaContext::new(ordinal).map_err(driver)?,
        ))
    }

    /// A context the engine already owns, with its default stream.
    pub fn from_context(ctx: Arc<CudaContext>) -> Self {
        let stream = ctx.default_stream();
        Self { ctx, stream }
    }

    /// A stream the engine already owns: its context, and the stream itself for fills and
    /// copies, so poison mode orders against the engine's kernels on it.
    pub fn from_stream(stream: &Arc<CudaStream>) -> Self {
        Self {
            ctx: stream.context().clone(),
            stream: stream.clone(),
        }
    }

    /// The same device with fills and copies on `stream` (of the same context).
    pub fn on_stream(&self, stream: &Arc<CudaStream>) -> Self {
        Self {
            ctx: self.ctx.clone(),
            stream: stream.clone(),
        }
    }

    pub fn context(&self) -> &Arc<CudaContext> {
        &self.ctx
    }

    /// The stream fills and copies are ordered on.
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    fn bind(&self) -> Result<(), DeviceError> {
        self.ctx.bind_to_thread().map_err(driver)
    }
}

impl<A: crate::Arena> crate::Allocated<A, CudaDevice> {
    /// [`Self::poison_phase`](crate::Allocated::poison_phase) on `stream` rather than the
    /// device's: for an engine whose phase runs on a stream of its own. `stream` must belong
    /// to the arena's context.
    pub fn poison_phase_on(
        &self,
        phase: A::Phase,
        stream: &Arc<CudaStream>,
    ) -> Result<(), crate::ArenaError> {
        self.poison_with(&self.device().on_stream(stream), phase)
    }
}

impl CudaDevice {
    /// The largest single allocation the device grants now, in bytes, to the 2 MiB page the
    /// driver allocates large allocations in: found by allocating and freeing at most
    /// `log2(free / 2 MiB) + 1` sizes, halving the step from the free memory down. What a plan
    /// must keep aside on this device is `total − largest_allocation()`: what the context,
    /// cuBLAS, NCCL and any other library already took, and the tail of free memory no
    /// allocation can take (pass it as the whole-GPU plan's reserve). Allocates nothing that
    /// outlives the call; other work on the device while it runs changes the answer.
    pub fn largest_allocation(&self) -> Result<usize, DeviceError> {
        const PAGE: usize = 2 << 20;
        let free = self
            .mem_info()
            .ok_or_else(|| DeviceError::Driver("cuMemGetInfo failed".into()))?
            .free;
        let mut largest = 0usize;
        let mut step = (free / PAGE).next_power_of_two() * PAGE;
        while step >= PAGE {
            match self.alloc(largest + step) {
                Ok(addr) => {
                    // SAFETY: just allocated on this device, this long, used by nothing.
                    unsafe { self.free(addr, largest + step) }?;
                    largest += step;
                }
                Err(DeviceError::OutOfMemory { .. }) => {}
                Err(e) => return Err(e),
            }
            step /= 2;
        }
        Ok(largest)
    }
}

impl Device for CudaDevice {
    fn name(&self) -> String {
        format!("cuda:{}", self.ctx.ordinal())
    }

    fn alloc(&self, bytes: usize) -> Result<u64, DeviceError> {
        if bytes == 0 {
            return Err(DeviceError::InvalidSize { bytes });
        }
        self.bind()?;
        // SAFETY: the context is bound to this thread; the size is non-zero.
        match unsafe { result::malloc_sync(bytes) } {
            Ok(ptr) => Ok(ptr),
            Err(DriverError(sys::cudaError_enum::CUDA_ERROR_OUT_OF_MEMORY)) => {
                Err(DeviceError::OutOfMemory { bytes })
            }
            Err(e) => Err(driver(e)),
        }
    }

    unsafe fn free(&self, addr: u64, _bytes: usize) -> Result<(), DeviceError> {
        self.bind()?;
        // SAFETY: the caller passes a live allocation of this device (the `Device::free`
        // contract), and the context it was made in is bound to this thread.
        unsafe { result::free_sync(addr) }.map_err(driver)
    }

    fn mem_info(&self) -> Option<MemInfo> {
        self.bind().ok()?;
        let (free, total) = result::mem_get_info().ok()?;
        Some(MemInfo { free, total })
    }

    unsafe fn write(&self, addr: u64, data: &[u8]) -> Result<(), DeviceError> {
        self.bind()?;
        // SAFETY: the caller promises `addr .. addr + data.len()` lies in a live allocation
        // of this device (the `Device::write` contract); the context is bound. `data` is
        // borrowed until the stream is synchronised below, so the copy never outlives it.
        unsafe { result::memcpy_htod_async(addr, data, self.stream.cu_stream()) }
            .map_err(driver)?;
        self.stream.synchronize().map_err(driver)
    }

    unsafe fn read(&self, addr: u64, out: &mut [u8]) -> Result<(), DeviceError> {
        self.bind()?;
        // SAFETY: as `write`, for `addr .. addr + out.len()`; `out` is borrowed until the
        // stream is synchronised.
        unsafe { result::memcpy_dtoh_async(out, addr, self.stream.cu_stream()) }.map_err(driver)?;
        self.stream.synchronize().map_err(driver)
    }

    fn upload(&self, staging_bytes: usize) -> Result<Box<dyn crate::Upload + '_>, DeviceError> {
        Ok(Box::new(PinnedUpload::new(self, staging_bytes)?))
    }

    unsafe fn fill(&self, addr: u64, bytes: usize, value: u8) -> Result<(), DeviceError> {
        self.bind()?;
        // SAFETY: as `write`, for `addr .. addr + bytes`. Asynchronous on the device's
        // stream: ordered after the kernels launched on it before, and before those launched
        // after; no host memory is involved, so nothing must outlive the call.
        unsafe { result::memset_d8_async(addr, value, bytes, self.stream.cu_stream()) }
            .map_err(driver)
    }
}

/// [`CudaDevice::upload`]: the staging memory cut into [`PinnedUpload::SLOTS`] pinned host
/// buffers used in turn. A piece is copied into a free buffer by a pool of up to
/// [`PinnedUpload::THREADS`] threads, spawned once for the upload (one thread's `memcpy`
/// from a memory-mapped file is bounded by its page faults, not by the copy; a thread
/// spawned a piece costs as much as the copy it does), and sent on the device's stream; the
/// event recorded after it says when the buffer is free again, so staging a piece overlaps
/// the transfer of the ones before it.
struct PinnedUpload<'a> {
    device: &'a CudaDevice,
    slots: Vec<(
        cudarc::driver::PinnedHostSlice<u8>,
        cudarc::driver::CudaEvent,
    )>,
    next: usize,
    pool: rayon::ThreadPool,
}

impl<'a> PinnedUpload<'a> {
    /// Buffers the staging memory is cut into. Chosen here: four keep the copy engine fed
    /// while the host stages the next piece.
    const SLOTS: usize = 4;
    /// Most threads that stage one piece (fewer where the host has fewer cores). Chosen here.
    const THREADS: usize = 16;
    /// The least a staging thread copies at once. Chosen here.
    const PART: usize = 1 << 20;

    fn new(device: &'a CudaDevice, staging_bytes: usize) -> Result<Self, DeviceError> {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(Self::THREADS.min(cores))
            .thread_name(|i| format!("arena-upload-{i}"))
            .build()
            .map_err(|e| DeviceError::Driver(format!("the upload's staging threads: {e}")))?;
        let each = (staging_bytes / Self::SLOTS).max(1 << 20);
        let mut slots = Vec::with_capacity(Self::SLOTS);
        for _ in 0..Self::SLOTS {
            // Write-combined: the host only writes these buffers (the copy engine reads
            // them), and stores to write-combined memory skip the cache, so staging does not
            // read each line before it writes it (cudarc's `alloc_pinned` default; measured
            // against cached buffers in `arena-spec/measurements/checkpoint_load.md`).
            // SAFETY: the buffer is written before any byte of it is read (`copy`).
            let slice = unsafe {
                device
                    .ctx
                    .alloc_pinned_with_flags::<u8>(each, sys::CU_MEMHOSTALLOC_WRITECOMBINED)
            }
            .map_err(driver)?;
            let event = device.ctx.new_event(None).map_err(driver)?;
            slots.push((slice, event));
        }
        Ok(Self {
            device,
            slots,
            next: 0,
            pool,
        })
    }
}

impl crate::Upload for PinnedUpload<'_> {
    unsafe fn copy(&mut self, addr: u64, data: &[u8]) -> Result<(), DeviceError> {
        self.device.bind()?;
        let mut done = 0;
        while done < data.len() {
            let (slice, event) = &mut self.slots[self.next];
            // Waits for the transfer that last read this buffer (an event never recorded
            // returns at once).
            event.synchronize().map_err(driver)?;
            let buffer = slice.as_mut_slice().map_err(driver)?;
            let n = (data.len() - done).min(buffer.len());
            let (src, dst) = (&data[done..done + n], &mut buffer[..n]);
            let part = n.div_ceil(self.pool.current_num_threads()).max(Self::PART);
            self.pool.install(|| {
                use rayon::prelude::*;
                dst.par_chunks_mut(part)
                    .zip(src.par_chunks(part))
                    .for_each(|(d, s)| d.copy_from_slice(s));
            });
            // SAFETY: `addr + done .. + n` lies in a live allocation (the caller's promise);
            // the pinned buffer is not written again before `event` says the transfer read
            // it, nor freed before the stream is synchronised (`finish`, or `Drop`).
            unsafe {
                result::memcpy_htod_async(
                    addr + done as u64,
                    &buffer[..n],
                    self.device.stream.cu_stream(),
                )
            }
            .map_err(driver)?;
            event.record(&self.device.stream).map_err(driver)?;
            done += n;
            self.next = (self.next + 1) % self.slots.len();
        }
        Ok(())
    }

    fn finish(self: Box<Self>) -> Result<(), DeviceError> {
        self.device.stream.synchronize().map_err(driver)
    }
}

impl Drop for PinnedUpload<'_> {
    /// Transfers still reading the pinned buffers finish before the buffers are freed
    /// (dropped after an error, or without `finish`).
    fn drop(&mut self) {
        let _ = self.device.stream.synchronize();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_a_gpu_construction_is_an_error_not_a_panic() {
        if CudaDevice::available() {
            eprintln!("a GPU is present; the GPU tests cover this device");
            return;
        }
        assert!(CudaDevice::new(0).is_err());
    }
}
