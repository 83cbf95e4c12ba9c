// Package nodedir holds the conventions of a nodes directory, which `sno-iso serve`,
// `serve urls` and `bmc --node` share: one subdirectory per node holding its bootstrap-in-place
// Ignition and, optionally, its sno.yaml; the node's inputs as node.Load reads them; the rule
// that a node's files stay inside its directory (a closed world: no ../, no absolute path,
// no symbolic link out); the node's BMC target and credentials; and the URLs at which a
// server over the directory publishes the node, under the secret kept beside the nodes.
package nodedir
