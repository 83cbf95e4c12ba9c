package main

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/sno-iso/sno-iso/capability"
	"github.com/sno-iso/sno-iso/nodedir"
	"github.com/sno-iso/sno-iso/serve"
	"github.com/urfave/cli/v2"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"
)

const deployDir = "../../deploy/kubernetes"

// kustomization is the part of kustomize's file the manifests use.
type kustomization struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Labels     []struct {
		Pairs map[string]string `json:"pairs"`
	} `json:"labels"`
	Resources []string `json:"resources"`
	Patches   []struct {
		Path   string `json:"path"`
		Target *struct {
			Kind string `json:"kind"`
			Name string `json:"name"`
		} `json:"target"`
	} `json:"patches"`
	Images []struct {
		Name    string `json:"name"`
		NewName string `json:"newName"`
		NewTag  string `json:"newTag"`
	} `json:"images"`
}

// deployManifests decodes every document the kustomization lists, strictly: a field the
// Kubernetes types do not have fails, as the API server would refuse it.
type deployManifests struct {
	deployment      *appsv1.Deployment
	service         *corev1.Service
	pdb             *policyv1.PodDisruptionBudget
	hpa             *autoscalingv2.HorizontalPodAutoscaler
	secrets         map[string]*corev1.Secret
	configMaps      map[string]*corev1.ConfigMap
	serviceAccounts map[string]*corev1.ServiceAccount
}

func strictDecode(t *testing.T, where string, doc []byte, into any) {
	t.Helper()
	if err := yaml.UnmarshalStrict(doc, into); err != nil {
		t.Fatalf("%s: %v", where, err)
	}
}

func loadDeployManifests(t *testing.T) deployManifests {
	t.Helper()
	k, m := loadKustomization(t, deployDir, "Kustomization")
	if m.deployment == nil || m.service == nil || m.pdb == nil || m.hpa == nil || len(m.secrets) == 0 {
		t.Fatal("the kustomization lacks a Deployment, Service, PodDisruptionBudget, HorizontalPodAutoscaler or Secret")
	}
	if len(k.Patches) != 0 {
		t.Error("the base kustomization patches its own manifests")
	}
	return m
}

// loadKustomization decodes dir's kustomization.yaml, which must be of kind, and every
// document of its resources.
func loadKustomization(t *testing.T, dir, kind string) (kustomization, deployManifests) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var k kustomization
	strictDecode(t, dir+"/kustomization.yaml", raw, &k)
	if k.Kind != kind {
		t.Fatalf("%s/kustomization.yaml is a %s, want a %s", dir, k.Kind, kind)
	}
	m := deployManifests{secrets: map[string]*corev1.Secret{}, configMaps: map[string]*corev1.ConfigMap{},
		serviceAccounts: map[string]*corev1.ServiceAccount{}}
	for _, file := range k.Resources {
		raw, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			t.Fatal(err)
		}
		for i, doc := range bytes.Split(raw, []byte("\n---\n")) {
			where := fmt.Sprintf("%s document %d", file, i+1)
			var head struct {
				Kind string `json:"kind"`
			}
			if err := yaml.Unmarshal(doc, &head); err != nil {
				t.Fatalf("%s: %v", where, err)
			}
			switch head.Kind {
			case "Deployment":
				m.deployment = new(appsv1.Deployment)
				strictDecode(t, where, doc, m.deployment)
			case "Service":
				m.service = new(corev1.Service)
				strictDecode(t, where, doc, m.service)
			case "PodDisruptionBudget":
				m.pdb = new(policyv1.PodDisruptionBudget)
				strictDecode(t, where, doc, m.pdb)
			case "HorizontalPodAutoscaler":
				m.hpa = new(autoscalingv2.HorizontalPodAutoscaler)
				strictDecode(t, where, doc, m.hpa)
			case "Secret":
				s := new(corev1.Secret)
				strictDecode(t, where, doc, s)
				m.secrets[s.Name] = s
			case "ConfigMap":
				c := new(corev1.ConfigMap)
				strictDecode(t, where, doc, c)
				m.configMaps[c.Name] = c
			case "ServiceAccount":
				a := new(corev1.ServiceAccount)
				strictDecode(t, where, doc, a)
				m.serviceAccounts[a.Name] = a
			default:
				t.Fatalf("%s: unexpected kind %q", where, head.Kind)
			}
		}
	}
	return k, m
}

// The manifests decode strictly, and what they tell serve matches what serve has: its
// flags, its probe paths, the ports it listens on, the files a node directory holds.
func TestDeployManifests(t *testing.T) {
	m := loadDeployManifests(t)
	d := m.deployment
	if d.Spec.Replicas == nil || *d.Spec.Replicas != 3 {
		t.Errorf("replicas %v, want 3", d.Spec.Replicas)
	}
	pod := d.Spec.Template
	if !selects(d.Spec.Selector.MatchLabels, pod.Labels) || !selects(m.service.Spec.Selector, pod.Labels) || !selects(m.pdb.Spec.Selector.MatchLabels, pod.Labels) {
		t.Error("the Deployment's, Service's or PodDisruptionBudget's selector does not select the pods")
	}
	if ref := m.hpa.Spec.ScaleTargetRef; ref.Kind != "Deployment" || ref.Name != d.Name || m.hpa.Spec.MinReplicas == nil || *m.hpa.Spec.MinReplicas != *d.Spec.Replicas {
		t.Errorf("the HorizontalPodAutoscaler scales %s/%s from %v, want Deployment/%s from %d", ref.Kind, ref.Name, m.hpa.Spec.MinReplicas, d.Name, *d.Spec.Replicas)
	}
	if len(pod.Spec.Containers) != 1 {
		t.Fatalf("%d containers, want 1", len(pod.Spec.Containers))
	}
	c := pod.Spec.Containers[0]
	if len(c.Args) == 0 || c.Args[0] != "serve" {
		t.Fatalf("args %q do not run serve", c.Args)
	}
	flags := serveFlagValues(t, c.Args[1:])
	ports := map[string]int32{}
	for _, p := range c.Ports {
		ports[p.Name] = p.ContainerPort
	}
	if got := listenPort(t, flags["listen"]); got != ports["http"] {
		t.Errorf("--listen %q, but the container port named http is %d", flags["listen"], ports["http"])
	}
	if got := listenPort(t, flags["admin-listen"]); got != ports["admin"] {
		t.Errorf("--admin-listen %q, but the container port named admin is %d", flags["admin-listen"], ports["admin"])
	}
	if sp := m.service.Spec.Ports; len(sp) != 1 || sp[0].TargetPort != intstr.FromString("http") {
		t.Errorf("the Service's ports %+v do not target the http port", sp)
	}
	// Only readiness follows the origin: a pod whose store is down must not be restarted.
	for name, probe := range map[string]*corev1.Probe{"startup": c.StartupProbe, "readiness": c.ReadinessProbe, "liveness": c.LivenessProbe} {
		want := serve.HealthPath
		if name == "readiness" {
			want = serve.ReadyPath
		}
		if probe == nil || probe.HTTPGet == nil || probe.HTTPGet.Path != want || probe.HTTPGet.Port != intstr.FromString("admin") {
			t.Errorf("%s probe %+v, want GET %s on the admin port", name, probe, want)
		}
	}
	if pod.Annotations["prometheus.io/path"] != serve.MetricsPath || pod.Annotations["prometheus.io/port"] != fmt.Sprint(ports["admin"]) {
		t.Errorf("the scrape annotations %v do not name %s on the admin port", pod.Annotations, serve.MetricsPath)
	}

	// Resources, non-root, read-only root with a writable /tmp.
	if c.Resources.Requests.Memory().IsZero() || c.Resources.Limits.Memory().IsZero() || c.Resources.Requests.Cpu().IsZero() || c.Resources.Limits.Cpu().IsZero() {
		t.Errorf("resources %+v: want CPU and memory requests and limits", c.Resources)
	}
	if psc := pod.Spec.SecurityContext; psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot || psc.RunAsUser == nil || *psc.RunAsUser == 0 {
		t.Error("the pod may run as root")
	}
	if sc := c.SecurityContext; sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
		t.Error("the container's root file system is writable or it may escalate privileges")
	}
	volumes := map[string]corev1.Volume{}
	for _, v := range pod.Spec.Volumes {
		volumes[v.Name] = v
	}
	nodeMounts := 0
	for _, vm := range c.VolumeMounts {
		v := volumes[vm.Name]
		switch {
		case vm.MountPath == "/tmp":
			if v.EmptyDir == nil || vm.ReadOnly {
				t.Error("/tmp is not a writable emptyDir")
				continue
			}
			// The base ISO's copy, twice while a replaced version is copied (RHCOS: 1.2 GiB),
			// beside the minimal ISOs; the kubelet evicts the pod past sizeLimit.
			limit := v.EmptyDir.SizeLimit
			if flags["iso-copy-dir"] != vm.MountPath || limit == nil || limit.Cmp(resource.MustParse("3Gi")) < 0 ||
				c.Resources.Requests.StorageEphemeral().Cmp(*limit) < 0 {
				t.Errorf("--iso-copy-dir %q, /tmp's sizeLimit %v, ephemeral-storage request %v: want the copy on /tmp, at least 3Gi, "+
					"requested", flags["iso-copy-dir"], limit, c.Resources.Requests.StorageEphemeral())
			}
		case strings.HasPrefix(vm.MountPath, flags["nodes"]+"/"):
			nodeMounts++
			if v.Secret == nil {
				t.Errorf("node volume %s is not a Secret", vm.Name)
				continue
			}
			s := m.secrets[v.Secret.SecretName]
			if s == nil {
				t.Errorf("node volume %s mounts Secret %s, which the kustomization does not have", vm.Name, v.Secret.SecretName)
				continue
			}
			if _, ok := s.StringData[nodedir.IgnitionFile]; !ok {
				t.Errorf("Secret %s has no %s", s.Name, nodedir.IgnitionFile)
			}
			if _, ok := s.StringData[nodedir.ConfigFile]; !ok {
				t.Errorf("Secret %s has no %s", s.Name, nodedir.ConfigFile)
			}
		}
	}
	if nodeMounts == 0 {
		t.Errorf("no node Secret mounted under --nodes %s", flags["nodes"])
	}
	checkURLSecret(t, m, c, volumes, flags)
	checkS3Access(t, m, pod.Spec, c, flags)
	// $(ISO_URL) and $(BASE_URL) must be variables the container defines.
	env := map[string]bool{}
	for _, e := range c.Env {
		env[e.Name] = true
	}
	for _, a := range c.Args {
		if i := strings.Index(a, "$("); i >= 0 {
			name := strings.TrimSuffix(a[i+2:], ")")
			if !env[name] {
				t.Errorf("arg %q uses $(%s), which the container does not define", a, name)
			}
		}
	}
}

// checkURLSecret checks that the replicas share the key of the capability URLs: a
// --secret-file in a Secret volume that the kustomization has, whose example is refused
// (a key published in these manifests would make every token guessable).
func checkURLSecret(t *testing.T, m deployManifests, c corev1.Container, volumes map[string]corev1.Volume, flags map[string]string) {
	t.Helper()
	file, ok := flags["secret-file"]
	if !ok {
		t.Error("no --secret-file: each replica would make a key of its own, and a node's URL would work on one replica only")
		return
	}
	if _, open := flags["open"]; open {
		t.Error("--open publishes guessable URLs")
	}
	for _, vm := range c.VolumeMounts {
		if filepath.Dir(file) != vm.MountPath {
			continue
		}
		v := volumes[vm.Name]
		if v.Secret == nil || !vm.ReadOnly {
			t.Fatalf("--secret-file %s is not in a read-only Secret volume", file)
		}
		s := m.secrets[v.Secret.SecretName]
		if s == nil {
			t.Fatalf("--secret-file %s is in Secret %s, which the kustomization does not have", file, v.Secret.SecretName)
		}
		example, ok := s.StringData[filepath.Base(file)]
		if !ok {
			t.Fatalf("Secret %s has no %s for --secret-file %s", s.Name, filepath.Base(file), file)
		}
		if _, err := capability.ParseSecret([]byte(example)); !errors.Is(err, capability.ErrBadSecret) {
			t.Errorf("the example of Secret %s is a usable key (%v): serve must refuse to start until it is replaced", s.Name, err)
		}
		return
	}
	t.Errorf("--secret-file %s is not in a mounted volume", file)
}

// checkS3Access checks the default way to the base ISO: s3:// with the ServiceAccount's IAM
// role (IRSA), and no key anywhere, neither in the environment nor in a Secret.
func checkS3Access(t *testing.T, m deployManifests, pod corev1.PodSpec, c corev1.Container, flags map[string]string) {
	t.Helper()
	sa := m.serviceAccounts[pod.ServiceAccountName]
	if sa == nil {
		t.Errorf("the pods run as ServiceAccount %q, which the kustomization does not have", pod.ServiceAccountName)
	} else if arn := sa.Annotations["eks.amazonaws.com/role-arn"]; !regexp.MustCompile(`^arn:aws:iam::\d{12}:role/\S+$`).MatchString(arn) {
		t.Errorf("ServiceAccount %s: eks.amazonaws.com/role-arn %q is not an IAM role ARN", sa.Name, arn)
	}
	for _, e := range c.Env {
		if strings.HasPrefix(e.Name, "AWS_ACCESS_KEY") || strings.HasPrefix(e.Name, "AWS_SECRET") || e.Name == "AWS_SESSION_TOKEN" {
			t.Errorf("the default deployment sets %s: the credentials are the ServiceAccount's role", e.Name)
		}
		if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
			t.Errorf("%s comes from Secret %s: the default path needs no secret in the environment", e.Name, e.ValueFrom.SecretKeyRef.Name)
		}
		if e.Name == "ISO_URL" && flags["iso"] == "$(ISO_URL)" {
			ref := e.ValueFrom.ConfigMapKeyRef
			if ref == nil || m.configMaps[ref.Name] == nil || !strings.HasPrefix(m.configMaps[ref.Name].Data[ref.Key], "s3://") {
				t.Errorf("ISO_URL %+v is not an s3:// URL from a ConfigMap of the kustomization", e.ValueFrom)
			}
		}
	}
	for _, s := range m.secrets {
		for key := range s.StringData {
			if strings.HasPrefix(key, "AWS_") {
				t.Errorf("Secret %s holds %s in the default path", s.Name, key)
			}
		}
	}
}

// jsonPatchOp is one operation of a JSON 6902 patch.
type jsonPatchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value string `json:"value"`
}

// The on-prem component: static keys from its Secret, the store's endpoint, path-style
// addressing and the CA that verifies it, patched into the base's Deployment and container.
func TestDeployOnPremS3Component(t *testing.T) {
	base := loadDeployManifests(t)
	dir := filepath.Join(deployDir, "on-prem-s3")
	k, m := loadKustomization(t, dir, "Component")
	var patch *appsv1.Deployment
	var args []string
	for _, p := range k.Patches {
		raw, err := os.ReadFile(filepath.Join(dir, p.Path))
		if err != nil {
			t.Fatal(err)
		}
		if p.Target == nil { // a strategic merge patch
			patch = new(appsv1.Deployment)
			strictDecode(t, p.Path, raw, patch)
			continue
		}
		if p.Target.Kind != "Deployment" || p.Target.Name != base.deployment.Name {
			t.Errorf("%s patches %s/%s, want Deployment/%s", p.Path, p.Target.Kind, p.Target.Name, base.deployment.Name)
		}
		var ops []jsonPatchOp
		strictDecode(t, p.Path, raw, &ops)
		for _, op := range ops {
			// Container 0 is serve's: appended arguments.
			if op.Op != "add" || op.Path != "/spec/template/spec/containers/0/args/-" {
				t.Errorf("%s: %s %s, want only arguments added to serve's container", p.Path, op.Op, op.Path)
			}
			args = append(args, op.Value)
		}
	}
	baseContainer := base.deployment.Spec.Template.Spec.Containers[0]
	if patch == nil || patch.Name != base.deployment.Name || len(patch.Spec.Template.Spec.Containers) != 1 ||
		patch.Spec.Template.Spec.Containers[0].Name != baseContainer.Name {
		t.Fatalf("no patch naming the Deployment %s and its container", base.deployment.Name)
	}
	flags := serveFlagValues(t, append(slices.Clone(baseContainer.Args[1:]), args...))
	if flags["s3-path-style"] != "true" {
		t.Errorf("--s3-path-style=%q, want true: on-prem stores address buckets in the path", flags["s3-path-style"])
	}
	c := patch.Spec.Template.Spec.Containers[0]
	env := map[string]corev1.EnvVar{}
	for _, e := range c.Env {
		env[e.Name] = e
	}
	for _, name := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"} {
		var ref *corev1.SecretKeySelector
		if e, ok := env[name]; ok && e.ValueFrom != nil {
			ref = e.ValueFrom.SecretKeyRef
		}
		if ref == nil || m.secrets[ref.Name] == nil || m.secrets[ref.Name].StringData[ref.Key] == "" {
			t.Errorf("%s is not from a key of the component's Secret: %+v", name, env[name])
		}
	}
	if u, err := url.Parse(env["AWS_ENDPOINT_URL_S3"].Value); err != nil || u.Scheme != "https" || u.Host == "" {
		t.Errorf("AWS_ENDPOINT_URL_S3 %q is not an https URL", env["AWS_ENDPOINT_URL_S3"].Value)
	}
	caFile := flags["ca-file"]
	volumes := map[string]corev1.Volume{}
	for _, v := range patch.Spec.Template.Spec.Volumes {
		volumes[v.Name] = v
	}
	var found bool
	for _, vm := range c.VolumeMounts {
		v := volumes[vm.Name]
		if filepath.Dir(caFile) != vm.MountPath || v.ConfigMap == nil {
			continue
		}
		cm := m.configMaps[v.ConfigMap.Name]
		found = vm.ReadOnly && cm != nil && strings.HasPrefix(cm.Data[filepath.Base(caFile)], "-----BEGIN CERTIFICATE-----")
	}
	if !found {
		t.Errorf("--ca-file %q is not a PEM certificate of a ConfigMap of the component mounted read-only", caFile)
	}
	for _, vm := range baseContainer.VolumeMounts {
		for _, mine := range c.VolumeMounts {
			if vm.Name == mine.Name || vm.MountPath == mine.MountPath {
				t.Errorf("the component's mount %s at %s collides with the base's", mine.Name, mine.MountPath)
			}
		}
	}
}

// serveFlagValues checks that every --name=value in args is a flag of `sno-iso serve` and
// returns them by name.
func serveFlagValues(t *testing.T, args []string) map[string]string {
	t.Helper()
	known := map[string]bool{}
	for _, f := range serveCommand().Flags {
		for _, n := range f.Names() {
			known[n] = true
		}
	}
	values := map[string]string{}
	for _, a := range args {
		name, value, ok := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		if !ok || !strings.HasPrefix(a, "--") {
			t.Errorf("arg %q is not --flag=value", a)
			continue
		}
		if !known[name] {
			t.Errorf("--%s is not a flag of sno-iso serve", name)
		}
		values[name] = value
	}
	for _, f := range serveCommand().Flags {
		if rf, ok := f.(cli.RequiredFlag); ok && rf.IsRequired() && values[f.Names()[0]] == "" {
			t.Errorf("the required flag --%s is missing", f.Names()[0])
		}
	}
	return values
}

func listenPort(t *testing.T, addr string) int32 {
	t.Helper()
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatalf("listen address %q: %v", addr, err)
	}
	var n int32
	fmt.Sscan(port, &n)
	return n
}

func selects(selector, labels map[string]string) bool {
	if len(selector) == 0 {
		return false
	}
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// A field the types do not have is refused: the strict decoding is real.
func TestDeployManifestsStrict(t *testing.T) {
	var d appsv1.Deployment
	doc := []byte("apiVersion: apps/v1\nkind: Deployment\nspec:\n  replicas: 3\n  replica: 4\n")
	if err := yaml.UnmarshalStrict(doc, &d); err == nil || !strings.Contains(err.Error(), "replica") {
		t.Errorf("an unknown field decoded: %v", err)
	}
}
