use arena_runtime::{dtype::bf16, DevicePtr, Regions};

pub struct Config {
    pub hidden_size: usize,
    pub adapter_max_rank: usize,
}

#[derive(Regions)]
#[regions(inputs(rows: usize))]
pub struct Scratch {
    #[region(shape = [rows], gate = rows > 0)]
    pub w: DevicePtr<bf16>,
}

fn main() {}
