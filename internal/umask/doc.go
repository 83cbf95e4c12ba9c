// Package umask lets tests check output file modes under the most permissive umask, on the
// platforms that have one.
package umask
