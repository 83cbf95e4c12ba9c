// Package coreos holds the OpenShift and Ignition semantics of a single-node install: the
// sno.yaml and install-config bootstrapInPlace settings, the install-to-disk unit and script,
// Ignition parsing and validation in the input's own spec version, and customizations of the
// installed node as MachineConfigs compared and merged by meaning.
package coreos
