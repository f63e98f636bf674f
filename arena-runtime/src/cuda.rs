//! `CudaDevice`: the arena on a real GPU through cudarc's driver API.
//!
//! libcuda is loaded at run time (cudarc's `dynamic-loading`), so this builds and the CPU
//! tests run without CUDA; [`CudaDevice::available`] says whether a GPU can be used.

use crate::device::{Device, MemInfo};
use crate::error::DeviceError;
use crate::ptr::DevicePtr;
use cudarc::driver::{
    result, sys, CudaContext, CudaStream, DriverError, LaunchArgs, PushKernelArg,
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

/// Device memory of one CUDA context. Allocations are plain `cuMemAlloc`s made in that
/// context, so an engine that owns a context (or a stream) allocates its arena in it.
#[derive(Debug, Clone)]
pub struct CudaDevice {
    ctx: Arc<CudaContext>,
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

    /// The primary context of device `ordinal`.
    pub fn new(ordinal: usize) -> Result<Self, DeviceError> {
        if !Self::available() {
            return Err(DeviceError::Driver("no CUDA driver or device found".into()));
        }
        Ok(Self {
            ctx: CudaContext::new(ordinal).map_err(driver)?,
        })
    }

    /// A context the engine already owns.
    pub fn from_context(ctx: Arc<CudaContext>) -> Self {
        Self { ctx }
    }

    /// The context of a stream the engine already owns.
    pub fn from_stream(stream: &Arc<CudaStream>) -> Self {
        Self {
            ctx: stream.context().clone(),
        }
    }

    pub fn context(&self) -> &Arc<CudaContext> {
        &self.ctx
    }

    fn bind(&self) -> Result<(), DeviceError> {
        self.ctx.bind_to_thread().map_err(driver)
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
        // of this device (the `Device::write` contract); the context is bound.
        unsafe { result::memcpy_htod_sync(addr, data) }.map_err(driver)
    }

    unsafe fn read(&self, addr: u64, out: &mut [u8]) -> Result<(), DeviceError> {
        self.bind()?;
        // SAFETY: as `write`, for `addr .. addr + out.len()`.
        unsafe { result::memcpy_dtoh_sync(out, addr) }.map_err(driver)
    }

    unsafe fn fill(&self, addr: u64, bytes: usize, value: u8) -> Result<(), DeviceError> {
        self.bind()?;
        // SAFETY: as `write`, for `addr .. addr + bytes`: one `cuMemsetD8`, synchronous, so
        // the fill is done before the phase's kernels are launched.
        unsafe { result::memset_d8_sync(addr, value, bytes) }.map_err(driver)
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
