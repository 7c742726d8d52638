pub mod fake_llm;
pub mod serve;
