// Package progress is how a node tells sno-iso where its bootstrap-in-place install is: the
// phases it reports (Phase), the report a node sends (Report) and what a server keeps of it
// (Record), the per-node report token, the HTTP handler that receives and answers reports,
// a Go client, and the systemd hooks (Hooks) that send them from the live and the installed
// system, generated here and nowhere else.
//
// The protocol: the node POSTs a JSON body {"phase", "unit", "status", "log"} (only phase
// required) to its report URL, <base>/<token>/<node>/report, and gets 204. A GET of the same
// URL returns what was recorded. The token is an HMAC of the server's secret under a label of
// its own, so it opens nothing but that node's reports.
package progress
