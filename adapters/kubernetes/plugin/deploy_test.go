package plugin_test

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/cmd/kube-scheduler/app/options"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"

	"github.com/finegrain/finegrain/adapters/kubernetes/plugin"
)

// deploy/kube-scheduler.yaml decodes, object by object, into the API's types; the
// Deployment runs the binary with the configuration the ConfigMap mounts, and its
// service account may read metrics.k8s.io's pods and nodes, patch pods (the GPU
// devices PreBind writes) and patch pods/resize (the scale-up rounds' resizes).
func TestDeployManifestDecodes(t *testing.T) {
	kinds := map[string]int{}
	var deploy *appsv1.Deployment
	var metricsRole, gpuRole, resizeRole *rbacv1.ClusterRole
	var metricsBinding, gpuBinding, resizeBinding *rbacv1.ClusterRoleBinding
	var role *rbacv1.Role
	var roleBinding *rbacv1.RoleBinding
	for _, obj := range manifestObjects(t) {
		kinds[obj.GetObjectKind().GroupVersionKind().Kind]++
		switch o := obj.(type) {
		case *appsv1.Deployment:
			deploy = o
		case *rbacv1.ClusterRole:
			switch {
			case strings.Contains(o.Name, "metrics"):
				metricsRole = o
			case strings.Contains(o.Name, "resize"):
				resizeRole = o
			default:
				gpuRole = o
			}
		case *rbacv1.Role:
			role = o
		case *rbacv1.RoleBinding:
			if o.RoleRef.Kind == "Role" && o.RoleRef.Name == "finegrain-scheduler" {
				roleBinding = o
			}
		case *rbacv1.ClusterRoleBinding:
			if o.RoleRef.Kind == "ClusterRole" && strings.Contains(o.RoleRef.Name, "metrics") {
				metricsBinding = o
			}
			if o.RoleRef.Kind == "ClusterRole" && strings.Contains(o.RoleRef.Name, "gpu") {
				gpuBinding = o
			}
			if o.RoleRef.Kind == "ClusterRole" && strings.Contains(o.RoleRef.Name, "resize") {
				resizeBinding = o
			}
		}
	}
	assert.Equal(t, map[string]int{"ServiceAccount": 1, "ClusterRole": 3, "ClusterRoleBinding": 5, "Role": 1, "RoleBinding": 2, "Deployment": 1}, kinds)
	require.NotNil(t, metricsRole, "a ClusterRole reads metrics.k8s.io")
	assert.Equal(t, []rbacv1.PolicyRule{{APIGroups: []string{"metrics.k8s.io"}, Resources: []string{"pods", "nodes"}, Verbs: []string{"get", "list"}}}, metricsRole.Rules)
	require.NotNil(t, metricsBinding)
	assert.Equal(t, metricsRole.Name, metricsBinding.RoleRef.Name)
	assert.Equal(t, []rbacv1.Subject{{Kind: "ServiceAccount", Name: "finegrain-scheduler", Namespace: "kube-system"}}, metricsBinding.Subjects)
	require.NotNil(t, gpuRole, "a ClusterRole lets PreBind write GPU devices on pods")
	assert.Equal(t, []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"patch"}}}, gpuRole.Rules)
	require.NotNil(t, gpuBinding)
	assert.Equal(t, gpuRole.Name, gpuBinding.RoleRef.Name)
	assert.Equal(t, []rbacv1.Subject{{Kind: "ServiceAccount", Name: "finegrain-scheduler", Namespace: "kube-system"}}, gpuBinding.Subjects)
	require.NotNil(t, resizeRole, "a ClusterRole lets the scale-up rounds resize pods in place")
	assert.Equal(t, []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods/" + plugin.ResizeSubresource}, Verbs: []string{"patch"}}}, resizeRole.Rules)
	require.NotNil(t, resizeBinding)
	assert.Equal(t, resizeRole.Name, resizeBinding.RoleRef.Name)
	assert.Equal(t, []rbacv1.Subject{{Kind: "ServiceAccount", Name: "finegrain-scheduler", Namespace: "kube-system"}}, resizeBinding.Subjects)
	require.NotNil(t, deploy)
	c := deploy.Spec.Template.Spec.Containers[0]
	assert.Contains(t, c.Command, "--config=/etc/finegrain/scheduler-config.yaml")
	require.Len(t, c.VolumeMounts, 1)
	assert.Equal(t, "/etc/finegrain", c.VolumeMounts[0].MountPath)
	assert.Equal(t, "finegrain-scheduler-config", deploy.Spec.Template.Spec.Volumes[0].ConfigMap.Name)
	assert.Equal(t, "finegrain-scheduler", deploy.Spec.Template.Spec.ServiceAccountName)
	prof := loadProfile(t)
	assert.True(t, strings.HasPrefix(prof.SchedulerName, "finegrain"), "the configuration's scheduler is %q", prof.SchedulerName)

	// Leader election is on, over a lease of the scheduler's own, with replicas to
	// take over; the Role lets the service account hold that lease and keep the
	// profile's checkpoint, by the names the configuration implies.
	cfg, err := options.LoadConfigFromFile(klog.Background(), configFile)
	require.NoError(t, err)
	le := cfg.LeaderElection
	assert.True(t, le.LeaderElect)
	assert.Equal(t, "leases", le.ResourceLock)
	assert.NotEqual(t, "kube-scheduler", le.ResourceName, "the default scheduler's lease")
	require.NotNil(t, deploy.Spec.Replicas)
	assert.GreaterOrEqual(t, *deploy.Spec.Replicas, int32(2))
	args := profileArgs(t, prof)
	require.NotNil(t, role)
	assert.Equal(t, le.ResourceNamespace, role.Namespace)
	assert.Equal(t, args.CheckpointNamespace, role.Namespace)
	grants := func(group, resource, name, verb string) bool {
		for _, r := range role.Rules {
			if slices.Contains(r.APIGroups, group) && slices.Contains(r.Resources, resource) && slices.Contains(r.Verbs, verb) &&
				(len(r.ResourceNames) == 0 || slices.Contains(r.ResourceNames, name)) {
				return true
			}
		}
		return false
	}
	checkpoint := "finegrain-estimates-" + prof.SchedulerName
	for _, verb := range []string{"create", "get", "update"} {
		assert.True(t, grants("coordination.k8s.io", "leases", le.ResourceName, verb), "lease %s: %s", le.ResourceName, verb)
		assert.True(t, grants("", "configmaps", checkpoint, verb), "ConfigMap %s: %s", checkpoint, verb)
	}
	assert.False(t, grants("", "configmaps", "some-other-config", "update"), "updates limited to the checkpoint")
	require.NotNil(t, roleBinding)
	assert.Equal(t, []rbacv1.Subject{{Kind: "ServiceAccount", Name: "finegrain-scheduler", Namespace: "kube-system"}}, roleBinding.Subjects)
}

// manifestObjects are deploy/kube-scheduler.yaml's objects, decoded into the API's
// types, in its order.
func manifestObjects(t *testing.T) []runtime.Object {
	t.Helper()
	data, err := os.ReadFile("../deploy/kube-scheduler.yaml")
	require.NoError(t, err)
	reader := yaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var out []runtime.Object
	for {
		doc, err := reader.Read()
		if err == io.EOF {
			return out
		}
		require.NoError(t, err)
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		obj, gvk, err := scheme.Codecs.UniversalDeserializer().Decode(doc, nil, nil)
		require.NoError(t, err, "document:\n%s", doc)
		obj.GetObjectKind().SetGroupVersionKind(*gvk)
		out = append(out, obj)
	}
}

// profileArgs decodes the FineGrain args of the shipped profile, defaults filled in.
func profileArgs(t *testing.T, prof config.KubeSchedulerProfile) plugin.Args {
	t.Helper()
	for _, pc := range prof.PluginConfig {
		if pc.Name != plugin.Name {
			continue
		}
		a, err := plugin.DecodeArgs(pc.Args)
		require.NoError(t, err)
		return a
	}
	t.Fatal("no FineGrain args in the profile")
	return plugin.Args{}
}
