// Package shellenv finds the files a directory's shell-entry configuration
// makes the user's shell run or load when it enters the directory, beyond
// that configuration itself: what a direnv .envrc sources (source_env,
// source_env_if_exists, source, .) or loads as variables (dotenv,
// dotenv_if_exists), and what a mise config sources or loads (env._.source,
// env._.file). direnv checks only the .envrc it was allowed, and mise
// trusts a config by its path: the files they pull in run unchecked, so a
// sandboxed command that rewrote one would run code in the user's shell at
// the next prompt there (a PATH or PROMPT_COMMAND from a .env does too).
package shellenv
