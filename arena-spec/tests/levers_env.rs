//! The default load path reads the levers from the process environment, as an engine's
//! loader does (the seeds: "the predicate is the one in the loader's `rowwise_fp8_enabled`
//! … so the two must agree"). Its own test binary, so setting the environment here cannot
//! reach any other test.

use arena_spec::models::find;
use arena_spec::{BufferSizes, ConfigError, Levers, ModelConfig};

#[test]
fn load_takes_the_levers_from_the_environment_and_the_explicit_form_does_not() {
    // The shipped file written where a user keeps theirs.
    let path = std::env::temp_dir().join(format!("arena-levers-{}.json", std::process::id()));
    std::fs::write(&path, find("qwen3.5-27b").unwrap().json).unwrap();
    let path = path.as_path();
    let size = |c: &ModelConfig| BufferSizes::from_config(c, 8192, 131072, 16, 128);

    // Nothing set: every lever off, on every path.
    std::env::remove_var("METRALE_FP8_ROWWISE");
    std::env::remove_var("METRALE_GGUF_NATIVE_Q2");
    let off = ModelConfig::load(path).unwrap();
    assert_eq!(off.levers, Levers::default());
    assert_eq!(size(&off).ssm_rowwise_w_bf16, 0);

    // Set as an engine's process would have them.
    std::env::set_var("METRALE_FP8_ROWWISE", "1");
    std::env::set_var("METRALE_GGUF_NATIVE_Q2", "1");
    for on in [
        ModelConfig::load(path).unwrap(),
        ModelConfig::from_json_str(&std::fs::read_to_string(path).unwrap(), path).unwrap(),
        find("qwen3.5-27b").unwrap().config().unwrap(),
    ] {
        assert!(on.levers.fp8_rowwise && on.levers.gguf_native_q2);
        let sizes = size(&on);
        assert!(
            sizes.ssm_rowwise_w_bf16 > 0,
            "the row-wise slab the loader needs"
        );
        assert!(sizes.q2_dequant_scratch > 0);
    }
    // The explicit forms ignore the environment.
    let explicit = ModelConfig::load_with_levers(path, Levers::default()).unwrap();
    assert_eq!(size(&explicit).ssm_rowwise_w_bf16, 0);
    let shipped = find("qwen3.5-27b")
        .unwrap()
        .config_with_levers(Levers::default());
    assert_eq!(shipped.unwrap().levers, Levers::default());

    // An invalid value is an error naming the variable, on the default path only.
    std::env::set_var("METRALE_FP8_ROWWISE", "yes");
    let err = ModelConfig::load(path).unwrap_err();
    assert!(matches!(err, ConfigError::Levers(_)), "{err:?}");
    assert!(err.to_string().contains("METRALE_FP8_ROWWISE"), "{err}");
    assert!(ModelConfig::load_with_levers(path, Levers::default()).is_ok());
    std::env::remove_var("METRALE_FP8_ROWWISE");
    std::env::remove_var("METRALE_GGUF_NATIVE_Q2");
}
