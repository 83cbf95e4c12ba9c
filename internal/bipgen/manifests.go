package bipgen

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

type manifest struct {
	path string
	data []byte
}

// manifests are the installer's /opt/openshift/manifests and /opt/openshift/openshift.
func (g *generator) manifests(root *issuer) []manifest {
	b64 := base64.StdEncoding.EncodeToString
	rootPEM := indent(string(root.pem), 4)
	sshKey := g.cfg.Passwd.Users[0].SSHAuthorizedKeys[0]
	pullSecret := string(g.pullSecret())
	installConfig := fmt.Sprintf(`apiVersion: v1
baseDomain: example.com
bootstrapInPlace:
  installationDisk: %s
compute:
- architecture: amd64
  hyperthreading: Enabled
  name: worker
  platform: {}
  replicas: 0
controlPlane:
  architecture: amd64
  hyperthreading: Enabled
  name: master
  platform: {}
  replicas: 1
metadata:
  name: sno
networking:
  clusterNetwork:
  - cidr: 10.128.0.0/14
    hostPrefix: 23
  machineNetwork:
  - cidr: 192.168.122.0/24
  networkType: OVNKubernetes
  serviceNetwork:
  - 172.30.0.0/16
platform:
  none: {}
pullSecret: '%s'
sshKey: |
  %s
`, g.disk, pullSecret, sshKey)
	machineConfigSSH := func(role string) string {
		return fmt.Sprintf(`apiVersion: machineconfiguration.openshift.io/v1
kind: MachineConfig
metadata:
  creationTimestamp: null
  labels:
    machineconfiguration.openshift.io/role: %[1]s
  name: 99-%[1]s-ssh
spec:
  baseOSExtensionsContainerImage: ""
  config:
    ignition:
      version: 3.2.0
    passwd:
      users:
      - name: core
        sshAuthorizedKeys:
        - |
          %[2]s
  extensions: null
  fips: false
  kernelArguments: null
  kernelType: ""
  osImageURL: ""
`, role, sshKey)
	}
	files := map[string]string{
		"manifests/cluster-config.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cluster-config-v1\n" +
			"  namespace: kube-system\ndata:\n  install-config: |\n" + indent(installConfig, 4),
		"manifests/cluster-dns-02-config.yml": "apiVersion: config.openshift.io/v1\nkind: DNS\nmetadata:\n" +
			"  creationTimestamp: null\n  name: cluster\nspec:\n  baseDomain: sno.example.com\n  platform:\n    aws: null\n    type: \"\"\n" +
			"status: {}\n",
		"manifests/cluster-infrastructure-02-config.yml": "apiVersion: config.openshift.io/v1\nkind: Infrastructure\nmetadata:\n" +
			"  creationTimestamp: null\n  name: cluster\nspec:\n  cloudConfig:\n    name: \"\"\n  platformSpec:\n    type: None\nstatus:\n" +
			"  apiServerInternalURI: https://api-int.sno.example.com:6443\n  apiServerURL: https://api.sno.example.com:6443\n" +
			"  controlPlaneTopology: SingleReplica\n  cpuPartitioning: None\n  etcdDiscoveryDomain: \"\"\n" +
			"  infrastructureName: sno-" + fmt.Sprintf("%x", g.e.bytes(3)) + "\n  infrastructureTopology: SingleReplica\n  platform: None\n" +
			"  platformStatus:\n    type: None\n",
		"manifests/cluster-ingress-02-config.yml": "apiVersion: config.openshift.io/v1\nkind: Ingress\nmetadata:\n" +
			"  creationTimestamp: null\n  name: cluster\nspec:\n  domain: apps.sno.example.com\nstatus: {}\n",
		"manifests/cluster-network-02-config.yml": "apiVersion: config.openshift.io/v1\nkind: Network\nmetadata:\n" +
			"  creationTimestamp: null\n  name: cluster\nspec:\n  clusterNetwork:\n  - cidr: 10.128.0.0/14\n    hostPrefix: 23\n  externalIP:\n" +
			"    policy: {}\n  networkType: OVNKubernetes\n  serviceNetwork:\n  - 172.30.0.0/16\nstatus: {}\n",
		"manifests/cluster-proxy-01-config.yaml": "apiVersion: config.openshift.io/v1\nkind: Proxy\nmetadata:\n" +
			"  creationTimestamp: null\n  name: cluster\nspec:\n  trustedCA:\n    name: \"\"\nstatus: {}\n",
		"manifests/cluster-scheduler-02-config.yml": "apiVersion: config.openshift.io/v1\nkind: Scheduler\nmetadata:\n" +
			"  creationTimestamp: null\n  name: cluster\nspec:\n  mastersSchedulable: true\n  policy:\n    name: \"\"\nstatus: {}\n",
		"manifests/cvo-overrides.yaml": "apiVersion: config.openshift.io/v1\nkind: ClusterVersion\nmetadata:\n" +
			"  name: version\n  namespace: openshift-cluster-version\nspec:\n  channel: stable-4.16\n  clusterID: " + uuid(g.e.bytes(16)) + "\n",
		"manifests/kube-system-configmap-root-ca.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: root-ca\n" +
			"  namespace: kube-system\ndata:\n  ca.crt: |\n" + rootPEM,
		"manifests/machine-config-server-tls-secret.yaml": "apiVersion: v1\nkind: Secret\nmetadata:\n" +
			"  name: machine-config-server-tls\n  namespace: openshift-machine-config-operator\ntype: kubernetes.io/tls\ndata:\n" +
			"  tls.crt: " + b64(root.pem) + "\n  tls.key: " + b64(root.keyPEM()) + "\n",
		"manifests/openshift-config-secret-pull-secret.yaml": "apiVersion: v1\nkind: Secret\nmetadata:\n  name: pull-secret\n" +
			"  namespace: openshift-config\ntype: kubernetes.io/dockerconfigjson\ndata:\n  .dockerconfigjson: " + b64([]byte(pullSecret)) + "\n",
		"openshift/99_kubeadmin-password-secret.yaml": "apiVersion: v1\nkind: Secret\nmetadata:\n  name: kubeadmin\n" +
			"  namespace: kube-system\ntype: Opaque\ndata:\n  kubeadmin: " + b64(g.e.bytes(60)) + "\n",
		"openshift/99_openshift-machineconfig_99-master-ssh.yaml": machineConfigSSH("master"),
		"openshift/99_openshift-machineconfig_99-worker-ssh.yaml": machineConfigSSH("worker"),
		"openshift/openshift-install-manifests.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n" +
			"  name: openshift-install-manifests\n  namespace: openshift-config\ndata:\n  invoker: user\n  version: v4.16.0\n",
	}
	var out []manifest
	for name, data := range files {
		out = append(out, manifest{path: "/opt/openshift/" + name, data: []byte(data)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].path < out[j].path })
	return out
}

// fill adds user manifests and key pairs until the output is exactly size bytes.
func (g *generator) fill(size int) ([]byte, error) {
	out, err := json.Marshal(g.cfg)
	if err != nil {
		return nil, err
	}
	reserve, err := g.entrySize(g.padding(0, 0))
	if err != nil {
		return nil, err
	}
	reserve += 8 // the comma and room for the padding's base64 granularity
	current := len(out)
	if current+reserve > size {
		return nil, fmt.Errorf("size %d is below %d, the least this seed's bootstrap-in-place structure takes", size, current+reserve)
	}
	for {
		files, err := g.extraFiles()
		if err != nil {
			return nil, err
		}
		add := 0
		for _, f := range files {
			n, err := g.entrySize(f)
			if err != nil {
				return nil, err
			}
			add += n + 1
		}
		if current+add+reserve > size {
			break
		}
		g.cfg.Storage.Files = append(g.cfg.Storage.Files, files...)
		current += add
	}
	return g.pad(size)
}

func (g *generator) entrySize(f file) (int, error) {
	b, err := json.Marshal(f)
	return len(b), err
}

// extraFiles is the next addition: a user CA key pair, or a user manifest carrying a
// trust bundle, in turn.
func (g *generator) extraFiles() ([]file, error) {
	g.extra++
	before := len(g.cfg.Storage.Files)
	defer func() { g.cfg.Storage.Files = g.cfg.Storage.Files[:before] }()
	name := fmt.Sprintf("user-ca-%03d", g.extra)
	pair, err := g.keyPair(name, 2048, true)
	if err != nil {
		return nil, err
	}
	if g.extra%2 == 1 {
		g.addFile("/opt/openshift/tls/"+name+".key", modeSecret, pair.key, false)
		g.addFile("/opt/openshift/tls/"+name+".crt", modeManifest, pair.cert, false)
	} else {
		data := fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s-bundle\n  namespace: openshift-config\ndata:\n"+
			"  ca-bundle.crt: |\n%s",
			name, indent(string(pair.cert), 4))
		g.addFile("/opt/openshift/openshift/50_"+name+"-bundle.yaml", modeManifest, []byte(data), false)
	}
	return append([]file(nil), g.cfg.Storage.Files[before:]...), nil
}

// padding is a user manifest whose contents are n bytes, with nameWidth digits in its name
// to adjust the total length by single bytes.
func (g *generator) padding(n, nameWidth int) file {
	header := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: user-notes\n  namespace: openshift-config\ndata:\n  notes: "
	body := header + base64.StdEncoding.EncodeToString(g.padStream(n))
	before := len(g.cfg.Storage.Files)
	g.addFile(fmt.Sprintf("/opt/openshift/openshift/99_user-notes-%0*d.yaml", nameWidth+1, 0), modeManifest, []byte(body[:n]), false)
	f := g.cfg.Storage.Files[before]
	g.cfg.Storage.Files = g.cfg.Storage.Files[:before]
	return f
}

// padStream returns the first bytes of a stream fixed for this generator, so that the
// padding of every candidate length shares its prefix.
func (g *generator) padStream(n int) []byte {
	for len(g.padBytes) < n {
		g.padBytes = append(g.padBytes, g.e.bytes(4096)...)
	}
	return g.padBytes[:n]
}

// pad appends the padding manifest whose length makes the output exactly size bytes.
func (g *generator) pad(size int) ([]byte, error) {
	files := g.cfg.Storage.Files
	defer func() { g.cfg.Storage.Files = files }()
	total := func(f file) ([]byte, error) {
		g.cfg.Storage.Files = append(files[:len(files):len(files)], f)
		return json.Marshal(g.cfg)
	}
	for width := 0; width < 4; width++ {
		lo, hi := 0, size
		for lo < hi { // the smallest content length whose output is at least size
			mid := (lo + hi) / 2
			out, err := total(g.padding(mid, width))
			if err != nil {
				return nil, err
			}
			if len(out) < size {
				lo = mid + 1
			} else {
				hi = mid
			}
		}
		out, err := total(g.padding(lo, width))
		if err != nil {
			return nil, err
		}
		if len(out) == size {
			return out, nil
		}
	}
	return nil, fmt.Errorf("no padding gives exactly %d bytes", size)
}

func indent(s string, n int) string {
	pad := strings.Repeat(" ", n)
	lines := strings.SplitAfter(s, "\n")
	for i, l := range lines {
		if l != "" && l != "\n" {
			lines[i] = pad + l
		}
	}
	return strings.Join(lines, "")
}

func uuid(b []byte) string {
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
