// Package pathutil holds the path predicates Warden's packages share
// (Within), so that each does not keep its own copy.
package pathutil
