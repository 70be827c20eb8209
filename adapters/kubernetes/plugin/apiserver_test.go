package plugin_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	authorizationv1 "k8s.io/api/authorization/v1"
	v1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiresource "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/finegrain/finegrain"
	"github.com/finegrain/finegrain/adapters/kubernetes/plugin"
	"github.com/finegrain/finegrain/gpu"
)

// The stage-sharing case against a real kube-apiserver backed by etcd, both started
// from binaries: FINEGRAIN_KUBE_APISERVER and FINEGRAIN_ETCD name them, or
// kube-apiserver and etcd are found on PATH. Without them the test says so and skips;
// the other tests use the fake clientset. .ci/real-apiserver builds kube-apiserver
// and installs etcd (adapters/kubernetes/README.md, Tests).
func TestRealAPIServer(t *testing.T) {
	client := realAPIServer(t)

	c := startCluster(t, setup{real: client})
	shareANode(t, c)
	c.waitFor("both pods to run in finegrain", func() bool {
		a, _ := c.plugin.Scheduler().TaskState(c.uid("early"))
		b, _ := c.plugin.Scheduler().TaskState(c.uid("late"))
		return a == finegrain.Running && b == finegrain.Running
	})
}

// Against a real API server, the checkpoint ConfigMap is written (created, then
// updated) and read back: a plugin learns a key and stops, and the next one, on the
// same API server, restores it and places the key's next pod as the first would
// have.
func TestRealAPIServerCheckpoint(t *testing.T) {
	client := realAPIServer(t)
	waitNamespace(t, client, checkpointNS)

	a := startCluster(t, setup{real: client, args: annotationArgs})
	a.node("n0", "4", "8Gi")
	learnETL(a)
	require.NoError(t, a.plugin.Close(), "the first checkpoint: a create")
	require.NoError(t, a.plugin.Close(), "the second: an update")
	cm, err := a.checkpointMap()
	require.NoError(t, err)
	assert.Equal(t, "1", cm.Annotations[plugin.CheckpointKeysAnnotation])
	a.close()
	require.NoError(t, client.CoreV1().Nodes().Delete(context.Background(), "n0", metav1.DeleteOptions{}))

	b := startCluster(t, setup{real: client, args: annotationArgs})
	placeSecond(b, true)
}

// Against a real API server, with deploy/scheduler-config-gpu.yaml: the devices go
// with the binding, and the API server's pods/binding writes them on the pod as it
// sets its node.
func TestRealAPIServerGPUDevices(t *testing.T) {
	client := realAPIServer(t)

	c := startCluster(t, setup{real: client, config: gpuConfigFile, args: gpuArgs("FGD")})
	c.gpuNode("n1", "T4", 2)
	c.create(gpuPod("share", gpu.Demand{Count: 1, Milli: 300}))
	c.create(gpuPod("whole", gpu.Demand{Count: 1, Milli: 1000}))
	assert.Equal(t, "n1", c.waitBound("share"))
	assert.Equal(t, "n1", c.waitBound("whole"))
	share, whole := c.devicesOf("share"), c.devicesOf("whole")
	require.Len(t, share, 1)
	require.Len(t, whole, 1)
	assert.NotEqual(t, share[0], whole[0], "a whole GPU is not shared")
}

// Against a real API server (v1.33 or later serves pods/resize), a planned growth of
// a latency-sensitive pod that slows down is carried out through the pods/resize
// subresource: discovery finds it, the API server accepts the patch — with the pod's
// resourceVersion as a precondition, and the pod's QoS class kept — and the pod's
// container holds the new CPU request and limit, as the books do — which only the
// subresource can do: a plain update of the pod's resources is refused. (No kubelet
// runs: the pod's spec is what the API server accepted; a kubelet would then carry
// it out.) The manifest's RBAC lets the scheduler's service account make it.
func TestRealAPIServerResize(t *testing.T) {
	client := realAPIServer(t)

	c := startCluster(t, setup{real: client, args: scaleUpArgs})
	c.node("n1", "8", "16Gi")
	c.create(lsPod("web"))
	c.waitBound("web")
	c.waitState("web", finegrain.Running)
	rv := c.get("web").ResourceVersion
	c.slowDown("web")
	require.NotEqual(t, rv, c.get("web").ResourceVersion, "the progress annotations were written")

	require.True(t, c.plugin.ScaleUpNow())
	assert.Equal(t, "4667m/6667m", c.cpuOf("web"), "the API server accepted the resize")
	got := c.get("web")
	assert.Equal(t, "2Gi", got.Spec.Containers[0].Resources.Requests.Memory().String(), "memory untouched")
	assert.Equal(t, v1.PodQOSBurstable, got.Status.QOSClass)
	assert.Equal(t, "cpu=4667m,memory=2Gi", c.held("web"))
	c.podEvent("web", plugin.ResizedReason, "expand by cpu=2667m through pods/resize")
	assert.Empty(t, c.logs.infos(plugin.Name, "planned action not carried out"))
	assert.Len(t, c.logs.infos(plugin.Name, "the API server serves pods/resize"), 1)
	// Only the subresource changes a pod's resources: a plain update is refused.
	got.Spec.Containers[0].Resources.Requests[v1.ResourceCPU] = apiresource.MustParse("5")
	_, err := client.CoreV1().Pods(ns).Update(c.ctx, got, metav1.UpdateOptions{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Forbidden")

	// deploy/kube-scheduler.yaml's ClusterRole lets the scheduler's service account
	// patch pods/resize, which system:kube-scheduler alone does not.
	sa := "system:serviceaccount:kube-system:finegrain-scheduler"
	may := func() bool {
		r, err := client.AuthorizationV1().SubjectAccessReviews().Create(c.ctx, &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User: sa, ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: ns, Verb: "patch", Resource: "pods", Subresource: plugin.ResizeSubresource, Name: "web"},
		}}, metav1.CreateOptions{})
		require.NoError(t, err)
		return r.Status.Allowed
	}
	assert.False(t, may(), "not without the manifest's grant")
	for _, obj := range manifestObjects(t) {
		switch o := obj.(type) {
		case *rbacv1.ClusterRole:
			_, err := client.RbacV1().ClusterRoles().Create(c.ctx, o, metav1.CreateOptions{})
			require.NoError(t, err)
		case *rbacv1.ClusterRoleBinding:
			_, err := client.RbacV1().ClusterRoleBindings().Create(c.ctx, o, metav1.CreateOptions{})
			require.NoError(t, err)
		}
	}
	c.waitFor("the grant to take effect", may)
}

// realAPIServer starts etcd and kube-apiserver from their binaries
// (FINEGRAIN_KUBE_APISERVER and FINEGRAIN_ETCD, or on PATH) and returns a client of
// the cluster's administrator; the test skips without them, or in -short.
func realAPIServer(t *testing.T) kubernetes.Interface {
	t.Helper()
	if testing.Short() {
		t.Skip("starts etcd and kube-apiserver; not in -short")
	}
	apiserver := binary(t, "FINEGRAIN_KUBE_APISERVER", "kube-apiserver")
	etcd := binary(t, "FINEGRAIN_ETCD", "etcd")
	return startAPIServer(t, apiserver, etcd)
}

// waitNamespace waits for the API server's own controllers to make namespace name.
func waitNamespace(t *testing.T, client kubernetes.Interface, name string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := client.CoreV1().Namespaces().Get(context.Background(), name, metav1.GetOptions{}); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("namespace %q not created by the API server", name)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// binary is the path of a program named by env or found on PATH; the test skips
// without it.
func binary(t *testing.T, env, name string) string {
	if p := os.Getenv(env); p != "" {
		return p
	}
	p, err := exec.LookPath(name)
	if err != nil {
		t.Skipf("no %s: set %s or put %s on PATH to run this test against a real API server", name, env, name)
	}
	return p
}

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// start runs a program until the test ends, its output in dir/name.log.
func start(t *testing.T, dir, name, path string, args ...string) {
	log, err := os.Create(filepath.Join(dir, name+".log"))
	require.NoError(t, err)
	cmd := exec.Command(path, args...)
	cmd.Stdout, cmd.Stderr = log, log
	require.NoError(t, cmd.Start(), "start %s", name)
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		_ = log.Close()
		if t.Failed() {
			out, _ := os.ReadFile(log.Name())
			t.Logf("%s's output:\n%s", name, out)
		}
	})
}

// startAPIServer starts etcd and kube-apiserver on free local ports and returns a
// client of the cluster's administrator.
func startAPIServer(t *testing.T, apiserver, etcd string) kubernetes.Interface {
	dir := t.TempDir()
	clientURL := fmt.Sprintf("http://127.0.0.1:%d", freePort(t))
	peerURL := fmt.Sprintf("http://127.0.0.1:%d", freePort(t))
	start(t, dir, "etcd", etcd, "--data-dir", filepath.Join(dir, "etcd"),
		"--listen-client-urls", clientURL, "--advertise-client-urls", clientURL,
		"--listen-peer-urls", peerURL, "--initial-advertise-peer-urls", peerURL,
		"--initial-cluster", "default="+peerURL)

	key, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	keyFile := filepath.Join(dir, "sa.key")
	require.NoError(t, os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}), 0o600))
	const token = "finegrain-test-token"
	tokens := filepath.Join(dir, "tokens.csv")
	require.NoError(t, os.WriteFile(tokens, []byte(token+`,admin,admin,"system:masters"`+"\n"), 0o600))
	port := freePort(t)
	start(t, dir, "kube-apiserver", apiserver,
		"--etcd-servers", clientURL,
		"--bind-address", "127.0.0.1", "--advertise-address", "127.0.0.1",
		"--secure-port", fmt.Sprint(port), "--cert-dir", filepath.Join(dir, "certs"),
		"--token-auth-file", tokens, "--authorization-mode", "RBAC",
		"--service-account-issuer", "https://kubernetes.default.svc",
		"--service-account-key-file", keyFile, "--service-account-signing-key-file", keyFile,
		"--service-cluster-ip-range", "10.0.0.0/24",
		// No service-account tokens, and no not-ready taint on new nodes: there is no
		// controller manager to make them or take it off.
		"--disable-admission-plugins", "ServiceAccount,TaintNodesByCondition",
		// A loopback advertise address needs no endpoint reconciler (there is one server).
		"--endpoint-reconciler-type", "none")

	host := fmt.Sprintf("https://127.0.0.1:%d", port)
	hc := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	deadline := time.Now().Add(90 * time.Second)
	for {
		req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, host+"/readyz", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		if resp, err := hc.Do(req); err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("kube-apiserver at %s not ready after 90s", host)
		}
		time.Sleep(100 * time.Millisecond)
	}
	client, err := kubernetes.NewForConfig(&rest.Config{Host: host, BearerToken: token, TLSClientConfig: rest.TLSClientConfig{Insecure: true}})
	require.NoError(t, err)
	// The default namespace is made by the API server's own controllers, soon after
	// it is ready.
	waitNamespace(t, client, ns)
	return client
}
