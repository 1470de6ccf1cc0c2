// Package homeentry checks a home_writable entry, for the configuration
// (at load) and the sandbox (its Policy) alike: one rule, so a setting the
// configuration accepts is one the sandbox takes.
package homeentry
