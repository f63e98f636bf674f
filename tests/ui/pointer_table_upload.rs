// A `T**` kernel reads 8-byte addresses; a `DevicePtr` also carries its length, so
// uploading a slice of them would hand the kernel a 16-byte-stride table. It must not compile;
// `DevicePtr::address_table` is the table to upload.
use arena_runtime::cudarc::driver::CudaStream;
use arena_runtime::{dtype::bf16, DevicePtr};
use std::sync::Arc;

fn upload(stream: &Arc<CudaStream>, a: DevicePtr<bf16>, b: DevicePtr<bf16>) {
    let _table = stream.clone_htod(&[a, b]);
}

fn upload_addresses(stream: &Arc<CudaStream>, a: DevicePtr<bf16>, b: DevicePtr<bf16>) {
    let _table = stream.clone_htod(&DevicePtr::address_table(&[a, b]));
}

fn main() {}
