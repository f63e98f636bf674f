// The named inputs: a field left out, or a value of the wrong kind, does not compile; the
// positional `from_config` is still there for the seeds' callers.
use arena_runtime::{dtype::bf16, Arena, DevicePtr};

pub struct Config {
    pub hidden_size: usize,
}

#[derive(Arena)]
#[arena(inputs(config: &Config, max_batch_tokens: usize, max_seq_len: usize))]
pub struct BufferArena {
    #[buffer(shape = [max_batch_tokens, config.hidden_size])]
    pub hidden: DevicePtr<bf16>,
    #[buffer(shape = [max_seq_len])]
    pub positions: DevicePtr<i32>,
}

fn main() {
    let config = Config { hidden_size: 64 };
    let _ = BufferArenaSizes::from_config(&config, 8192, 131072);
    let _ = BufferArenaSizes::from_inputs(&config, &BufferArenaInputs { max_batch_tokens: 8192 });
    let _ = BufferArenaSizes::from_inputs(
        &config,
        &BufferArenaInputs { max_batch_tokens: 8192, max_seq_len: -1 },
    );
    let _ = BufferArenaSizes::from_inputs(&BufferArenaInputs { max_batch_tokens: 8192, max_seq_len: 1 });
}
