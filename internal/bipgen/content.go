package bipgen

import (
	"fmt"
	"strings"
)

// The unit and script texts below follow the shape of openshift-install's
// bootstrap-in-place output as described in spec/bootstrap-in-place.md; they are written
// for this generator, not copied.

type unitText struct {
	name     string
	enabled  bool
	contents string
}

func units() []unitText {
	return []unitText{
		{"approve-csr.service", true, `[Unit]
Description=Approve CSRs during bootstrap phase
Wants=bootkube.service
After=bootkube.service

[Service]
ExecStart=/usr/local/bin/approve-csr.sh /opt/openshift/auth/kubeconfig-loopback
Restart=on-failure
RestartSec=5s

[Install]
WantedBy=multi-user.target
`},
		{"bootkube.service", false, `[Unit]
Description=Bootstrap a Kubernetes cluster
Requires=crio-configure.service
Wants=kubelet.service
After=kubelet.service crio-configure.service
ConditionPathExists=!/opt/openshift/.bootkube.done

[Service]
WorkingDirectory=/opt/openshift
ExecStart=/usr/local/bin/bootkube.sh
Restart=on-failure
RestartSec=5s
`},
		{"chown-gatewayd-key.service", true, `[Unit]
Description=Change ownership of the journal-gatewayd key
Before=systemd-journal-gatewayd.service

[Service]
Type=oneshot
ExecStart=/usr/bin/chown systemd-journal-gateway: /opt/openshift/tls/journal-gatewayd.key /opt/openshift/tls/journal-gatewayd.crt

[Install]
RequiredBy=systemd-journal-gatewayd.service
`},
		{"crio-configure.service", false, `[Unit]
Description=Configure CRI-O to use the pause image
After=release-image.service
Requires=release-image.service

[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=/usr/local/bin/crio-configure.sh
`},
		{"install-to-disk.service", true, `[Unit]
Description=Install to disk
Requires=bootkube.service
Wants=bootkube.service
After=bootkube.service
ConditionPathExists=!/opt/openshift/.install-to-disk.done

[Service]
WorkingDirectory=/opt/openshift
ExecStart=/usr/local/bin/install-to-disk.sh
Restart=on-failure
RestartSec=5s
`},
		{"kubelet.service", true, `[Unit]
Description=Kubernetes Kubelet
Wants=rpc-statd.service crio.service release-image.service
After=crio.service release-image.service

[Service]
Type=notify
ExecStartPre=/bin/mkdir --parents /etc/kubernetes/manifests
ExecStartPre=/bin/rm -f /var/lib/kubelet/cpu_manager_state
EnvironmentFile=-/etc/kubernetes/kubelet-workaround
EnvironmentFile=-/etc/kubernetes/kubelet-env
ExecStart=/usr/local/bin/kubelet.sh
Restart=always
RestartSec=10

[Install]
WantedBy=multi-user.target
`},
		{"progress.service", true, `[Unit]
Description=Report the completion of the cluster bootstrap process
Wants=bootkube.service
After=bootkube.service

[Service]
ExecStart=/usr/local/bin/report-progress.sh /opt/openshift/auth/kubeconfig
Restart=on-failure
RestartSec=5s

[Install]
WantedBy=multi-user.target
`},
		{"release-image.service", false, `[Unit]
Description=Download the OpenShift Release Image
Wants=network-online.target
After=network-online.target

[Service]
Type=oneshot
ExecStart=/usr/local/bin/release-image-download.sh
RemainAfterExit=true
`},
		{"restart-sshd.service", true, `[Unit]
Description=Restart sshd so that it picks up the bootstrap host keys
After=sshd.service

[Service]
Type=oneshot
ExecStart=/usr/bin/systemctl restart sshd.service

[Install]
WantedBy=multi-user.target
`},
		{"systemd-journal-gatewayd.socket", true, `[Unit]
Description=Journal Gateway Service Socket

[Socket]
ListenStream=19531
Service=systemd-journal-gatewayd.service

[Install]
WantedBy=sockets.target
`},
	}
}

// serviceRecordScript stands in for the installer's bootstrap-service-record.sh, which the
// bootstrap scripts source: the same stage functions, each appending one JSON line per
// event to the calling service's record.
const serviceRecordScript = `#!/usr/bin/env bash
SERVICE_RECORD="/var/log/openshift/$(basename "$0" .sh).json"
STAGE_NAME=""
mkdir --parents "$(dirname "$SERVICE_RECORD")"

add_service_record() {
  printf '{"phase":"%s","stage":"%s","result":"%s"}\n' "$1" "$STAGE_NAME" "${2:-}" >>"$SERVICE_RECORD"
}

record_service_stage_start() {
  if [ -n "$STAGE_NAME" ]; then
    echo "stage $1 started before stage $STAGE_NAME ended"
    exit 1
  fi
  STAGE_NAME=${1:?a stage name}
  add_service_record "stage start"
}

record_service_stage_success() {
  add_service_record "stage end" success
  STAGE_NAME=""
}

record_service_stage_failure() {
  add_service_record "stage end" failure
  STAGE_NAME=""
}

trap 'record_service_stage_failure' ERR
`

// installerInstallToDiskScript is install-to-disk.sh as the installer renders it.
func installerInstallToDiskScript(disk string) string {
	return `#!/usr/bin/env bash
set -euoE pipefail ## -E option will cause functions to inherit trap

. /usr/local/bin/bootstrap-service-record.sh

echo "Waiting for /opt/openshift/.bootkube.done"
until [ -f /opt/openshift/.bootkube.done ]; do
  sleep 5
done

if [ ! -f coreos-installer.done ]; then
  record_service_stage_start "coreos-installer"
  # Write image + ignition to disk
  echo "Executing coreos-installer with the following options: install -i /opt/openshift/master.ign ` + disk + `"
  coreos-installer install -i /opt/openshift/master.ign ` + disk + `

  touch coreos-installer.done
  record_service_stage_success
fi

record_service_stage_start "reboot"
echo "Going to reboot"
shutdown -r +1 "Bootstrap completed, server is going to reboot."
touch /opt/openshift/.install-to-disk.done
echo "Done"
record_service_stage_success
`
}

// bootkubeStages are the render steps of bootkube.sh, one per operator.
var bootkubeStages = []struct{ name, image, args string }{
	{"cvo-bootstrap", "RELEASE_IMAGE_DIGEST", "render --output-dir=/assets/cvo-bootstrap --release-image=${RELEASE_IMAGE_DIGEST}"},
	{"etcd-bootstrap", "CLUSTER_ETCD_OPERATOR_IMAGE", "/usr/bin/cluster-etcd-operator render --asset-output-dir=/assets/etcd-bootstrap"},
	{"config-bootstrap", "CONFIG_OPERATOR_IMAGE", "/usr/bin/cluster-config-operator render " +
		"--config-output-file=/assets/config-bootstrap/config"},
	{"kube-apiserver-bootstrap", "KUBE_APISERVER_OPERATOR_IMAGE", "/usr/bin/cluster-kube-apiserver-operator render " +
		"--asset-output-dir=/assets/kube-apiserver-bootstrap"},
	{"kube-controller-manager-bootstrap", "KUBE_CONTROLLER_MANAGER_OPERATOR_IMAGE", "/usr/bin/cluster-kube-controller-manager-operator " +
		"render --asset-output-dir=/assets/kube-controller-manager-bootstrap"},
	{"kube-scheduler-bootstrap", "KUBE_SCHEDULER_OPERATOR_IMAGE", "/usr/bin/cluster-kube-scheduler-operator render " +
		"--asset-output-dir=/assets/kube-scheduler-bootstrap"},
	{"ingress-operator-bootstrap", "INGRESS_OPERATOR_IMAGE", "render --prefix=cluster-ingress- " +
		"--output-dir=/assets/ingress-operator-manifests"},
	{"mco-bootstrap", "MACHINE_CONFIG_OPERATOR_IMAGE", "bootstrap --root-ca=/assets/tls/root-ca.crt --dest-dir=/assets/mco-bootstrap"},
	{"cco-bootstrap", "CLOUD_CREDENTIAL_OPERATOR_IMAGE", "render --dest-dir=/assets/cco-bootstrap --manifests-dir=/assets/manifests"},
}

func bootkubeScript() string {
	var b strings.Builder
	b.WriteString(`#!/usr/bin/env bash
set -euoE pipefail ## -E option will cause functions to inherit trap

. /usr/local/bin/bootstrap-service-record.sh
. /usr/local/bin/release-image.sh

mkdir --parents /etc/kubernetes/{manifests,bootstrap-configs,bootstrap-manifests}
BOOTSTRAP_INPLACE=true

`)
	for _, s := range bootkubeStages {
		fmt.Fprintf(&b, `if [ ! -f %[1]s.done ]
then
	record_service_stage_start "%[1]s"
	echo "Rendering %[1]s manifests..."
	%[2]s=$(image_for %[3]s)
	rm --recursive --force %[1]s
	bootkube_podman_run \
		--name %[1]s-render \
		--volume "$PWD:/assets:z" \
		"${%[2]s}" \
		%[4]s
	cp %[1]s/manifests/* manifests/ || true
	touch %[1]s.done
	record_service_stage_success
fi

`, s.name, s.image, strings.ToLower(strings.ReplaceAll(strings.TrimSuffix(s.image, "_IMAGE"), "_", "-")), s.args)
	}
	b.WriteString(`if [ "$BOOTSTRAP_INPLACE" = true ]
then
	. /usr/local/bin/bootstrap-in-place.sh "${CLUSTER_BOOTSTRAP_IMAGE}"
fi

# Workaround for https://github.com/opencontainers/runc/pull/1807
touch /opt/openshift/.bootkube.done
echo "bootkube.service complete"
`)
	return b.String()
}

const bootstrapInPlaceScript = `#!/usr/bin/env bash
set -euoE pipefail

CLUSTER_BOOTSTRAP_IMAGE=$1

if [ ! -f stop-etcd.done ]; then
  echo "Stop etcd static pod by moving the manifest"
  mv /etc/kubernetes/manifests/etcd-member-pod.yaml /etc/kubernetes || echo "already moved etcd-member-pod.yaml"
  until ! crictl ps | grep etcd; do
    echo "Waiting for etcd to go down"
    sleep 10
  done
  touch stop-etcd.done
fi

if [ ! -f master-ignition.done ]; then
  echo "Creating master ignition and writing it to disk"
  curl --header 'Accept: application/vnd.coreos.ignition+json;version=3.2.0' \
    http://localhost:22624/config/master -o /opt/openshift/original-master.ign
  GATHER_ID="bootstrap"
  GATHER_TAR_FILE=log-bundle-${GATHER_ID}.tar.gz
  echo "Gathering installer bootstrap logs"
  TAR_FILE=${GATHER_TAR_FILE} /usr/local/bin/installer-gather.sh --id ${GATHER_ID}
  podman run --privileged --rm --net=host \
    --volume "$PWD:/assets:z" \
    --volume "/usr/local/bin/:/assets/bin" \
    --volume "/var/lib/etcd/:/assets/etcd-data" \
    --volume "/etc/kubernetes:/assets/kubernetes" \
    "${CLUSTER_BOOTSTRAP_IMAGE}" \
    bootstrap-in-place \
    --asset-dir /assets \
    --input /assets/bootstrap-in-place/master-update.fcc \
    --output /assets/master.ign
  touch master-ignition.done
fi
`

const masterUpdateFCC = `variant: fcos
version: 1.1.0
ignition:
  config:
    merge:
      - local: original-master.ign
storage:
  trees:
    - local: kubernetes/bootstrap-configs
      path: /etc/kubernetes/bootstrap-configs
    - local: tls/
      path: /etc/kubernetes/bootstrap-secrets
    - local: etcd-bootstrap/bootstrap-manifests/secrets/
      path: /etc/kubernetes/static-pod-resources/etcd-member
    - local: etcd-data
      path: /var/lib/etcd
  files:
    - path: /etc/kubernetes/bootstrap-secrets/kubeconfig
      contents:
        local: auth/kubeconfig-loopback
    - path: /etc/kubernetes/manifests/etcd-pod.yaml
      contents:
        local: etcd-bootstrap/bootstrap-manifests/etcd-member-pod.yaml
    - path: /etc/kubernetes/manifests/kube-apiserver-pod.yaml
      contents:
        local: kube-apiserver-bootstrap/bootstrap-manifests/kube-apiserver-pod.yaml
    - path: /etc/kubernetes/manifests/kube-controller-manager-pod.yaml
      contents:
        local: kube-controller-manager-bootstrap/bootstrap-manifests/kube-controller-manager-pod.yaml
    - path: /etc/kubernetes/manifests/kube-scheduler-pod.yaml
      contents:
        local: kube-scheduler-bootstrap/bootstrap-manifests/kube-scheduler-pod.yaml
    - path: /usr/local/bin/bootstrap-in-place-post-reboot.sh
      contents:
        local: bootstrap-in-place/bootstrap-in-place-post-reboot.sh
      mode: 0555
    - path: /var/log/log-bundle-bootstrap.tar.gz
      contents:
        local: log-bundle-bootstrap.tar.gz
systemd:
  units:
    - name: bootkube.service
      enabled: true
      contents: |
        [Unit]
        Description=Bootkube - bootstrap in place post reboot
        Wants=kubelet.service
        After=kubelet.service
        ConditionPathExists=/etc/kubernetes/bootstrap-secrets/kubeconfig
        [Service]
        Type=oneshot
        ExecStart=/usr/local/bin/bootstrap-in-place-post-reboot.sh
        RestartSec=5s
        [Install]
        WantedBy=multi-user.target
`

const postRebootScript = `#!/usr/bin/env bash
set -euoE pipefail

export KUBECONFIG=/etc/kubernetes/bootstrap-secrets/kubeconfig

function wait_for_api {
  until oc get csr &> /dev/null; do
    echo "Waiting for api ..."
    sleep 5
  done
}

function signal_bootstrap_complete {
  until oc get cm bootstrap -n kube-system &> /dev/null; do
    echo "Creating bootstrap configmap ..."
    oc create cm bootstrap -n kube-system --from-literal status=complete || true
  done
}

function approve_csr {
  echo "Approving csrs ..."
  until [ "$(oc get nodes --selector='node-role.kubernetes.io/master' -o jsonpath='{.items[0].status.conditions[?(@.type=="Ready")].status}' | grep -c "True")" -eq 1 ]; do
    oc get csr -o go-template='{{range .items}}{{if not .status}}{{.metadata.name}}{{"\n"}}{{end}}{{end}}' | xargs --no-run-if-empty oc adm certificate approve
    sleep 30
  done
}

function clean {
  rm -rf /etc/kubernetes/bootstrap-configs /etc/kubernetes/bootstrap-secrets /opt/openshift
  systemctl disable bootkube.service
}

wait_for_api
signal_bootstrap_complete
approve_csr
clean
`
