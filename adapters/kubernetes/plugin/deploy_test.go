package plugin_test

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/scheme"
)

// deploy/kube-scheduler.yaml decodes, object by object, into the API's types; the
// Deployment runs the binary with the configuration the ConfigMap mounts, and its
// service account may read metrics.k8s.io's pods and nodes.
func TestDeployManifestDecodes(t *testing.T) {
	data, err := os.ReadFile("../deploy/kube-scheduler.yaml")
	require.NoError(t, err)
	reader := yaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	kinds := map[string]int{}
	var deploy *appsv1.Deployment
	var metricsRole *rbacv1.ClusterRole
	var metricsBinding *rbacv1.ClusterRoleBinding
	for {
		doc, err := reader.Read()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		obj, gvk, err := scheme.Codecs.UniversalDeserializer().Decode(doc, nil, nil)
		require.NoError(t, err, "document:\n%s", doc)
		kinds[gvk.Kind]++
		switch o := obj.(type) {
		case *appsv1.Deployment:
			deploy = o
		case *rbacv1.ClusterRole:
			metricsRole = o
		case *rbacv1.ClusterRoleBinding:
			if o.RoleRef.Kind == "ClusterRole" && strings.Contains(o.RoleRef.Name, "metrics") {
				metricsBinding = o
			}
		}
	}
	assert.Equal(t, map[string]int{"ServiceAccount": 1, "ClusterRole": 1, "ClusterRoleBinding": 3, "RoleBinding": 1, "Deployment": 1}, kinds)
	require.NotNil(t, metricsRole, "a ClusterRole reads metrics.k8s.io")
	assert.Equal(t, []rbacv1.PolicyRule{{APIGroups: []string{"metrics.k8s.io"}, Resources: []string{"pods", "nodes"}, Verbs: []string{"get", "list"}}}, metricsRole.Rules)
	require.NotNil(t, metricsBinding)
	assert.Equal(t, metricsRole.Name, metricsBinding.RoleRef.Name)
	assert.Equal(t, []rbacv1.Subject{{Kind: "ServiceAccount", Name: "finegrain-scheduler", Namespace: "kube-system"}}, metricsBinding.Subjects)
	require.NotNil(t, deploy)
	c := deploy.Spec.Template.Spec.Containers[0]
	assert.Contains(t, c.Command, "--config=/etc/finegrain/scheduler-config.yaml")
	require.Len(t, c.VolumeMounts, 1)
	assert.Equal(t, "/etc/finegrain", c.VolumeMounts[0].MountPath)
	assert.Equal(t, "finegrain-scheduler-config", deploy.Spec.Template.Spec.Volumes[0].ConfigMap.Name)
	assert.Equal(t, "finegrain-scheduler", deploy.Spec.Template.Spec.ServiceAccountName)
	prof := loadProfile(t)
	assert.True(t, strings.HasPrefix(prof.SchedulerName, "finegrain"), "the configuration's scheduler is %q", prof.SchedulerName)
}
