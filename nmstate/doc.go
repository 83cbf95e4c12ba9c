// Package nmstate reads NMState documents (the nmstate 2.x schema that agent-config.yaml's
// hosts[].networkConfig, coreos-installer's --network-nmstate and `nmstatectl gc` take) and
// renders the NetworkManager keyfiles that mean what `nmstatectl gc` generates for them.
//
// Parsing is strict as nmstate's is: an unknown key is an error naming the file, the line
// and the nearest known key, and a setting this package cannot render (an OVS bridge, an
// IPsec tunnel, ethtool settings) is an error naming the interface, never silently dropped.
// The package reads bytes and returns bytes: it knows nothing of ISOs or files on disk.
package nmstate
