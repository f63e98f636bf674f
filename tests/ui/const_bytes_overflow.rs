// `const_bytes` is a layout's bytes as a `usize` in a `const` item; a formula that fails
// stops the build with the error's message, naming the region and the operation.
use arena_runtime::{DevicePtr, Regions};

#[derive(Regions)]
#[regions(const, inputs(rows: usize))]
pub struct Table {
    #[region(shape = [rows, 3])]
    pub weights: DevicePtr<f32>,
}

const FITS: usize = Table::const_bytes(1 << 10);
const TOO_MANY_ROWS: usize = Table::const_bytes(usize::MAX / 2);

fn main() {
    let _ = (FITS, TOO_MANY_ROWS);
}
