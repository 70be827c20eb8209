package plugin_test

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/cmd/kube-scheduler/app/options"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/finegrain/finegrain/adapters/kubernetes/plugin"
)

// kustomization holds the fields of kustomize's Kustomization
// (sigs.k8s.io/kustomize/api/types, kustomize.config.k8s.io/v1beta1) that
// deploy/kustomization.yaml uses, under kustomize's names. It is decoded strictly: a
// field misspelt, or one this mirror lacks, fails the test (kustomize is not a
// dependency of this module; kubectl and kustomize cannot run here).
type kustomization struct {
	APIVersion         string         `json:"apiVersion"`
	Kind               string         `json:"kind"`
	Resources          []string       `json:"resources"`
	ConfigMapGenerator []mapGenerator `json:"configMapGenerator"`
	Images             []struct {
		Name    string `json:"name"`
		NewName string `json:"newName,omitempty"`
		NewTag  string `json:"newTag,omitempty"`
	} `json:"images"`
}

type mapGenerator struct {
	Name      string   `json:"name"`
	Namespace string   `json:"namespace"`
	Files     []string `json:"files"`
}

// decodeManifests decodes every document of a manifest file into the API's types.
func decodeManifests(t *testing.T, path string) []runtime.Object {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	reader := yaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var objs []runtime.Object
	for {
		doc, err := reader.Read()
		if err == io.EOF {
			return objs
		}
		require.NoError(t, err)
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(doc, nil, nil)
		require.NoError(t, err, "%s, document:\n%s", path, doc)
		objs = append(objs, obj)
	}
}

// deploy/kustomization.yaml is a valid base by construction: its fields are
// kustomize's; every resource it lists exists and decodes into the API's types;
// every file of its ConfigMap generator exists and is a scheduler configuration
// kube-scheduler loads, under the key the Deployment's --config reads, in the
// ConfigMap the Deployment mounts; its image is the Deployment's; and every manifest
// of the directory is in it, but the alternative configurations (queues, GPUs), which
// its comment names and which load as kube-scheduler configurations too.
func TestKustomization(t *testing.T) {
	const dir = "../deploy"
	data, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	require.NoError(t, err)
	var k kustomization
	require.NoError(t, sigsyaml.UnmarshalStrict(data, &k))
	assert.Equal(t, "kustomize.config.k8s.io/v1beta1", k.APIVersion)
	assert.Equal(t, "Kustomization", k.Kind)

	listed := []string{"kustomization.yaml"}
	var deploy *appsv1.Deployment
	require.NotEmpty(t, k.Resources)
	for _, r := range k.Resources {
		listed = append(listed, r)
		for _, obj := range decodeManifests(t, filepath.Join(dir, r)) {
			if d, ok := obj.(*appsv1.Deployment); ok {
				deploy = d
			}
		}
	}
	require.NotNil(t, deploy, "a resource holds the Deployment")
	pod := deploy.Spec.Template.Spec
	require.Len(t, pod.Containers, 1)
	var config string // the file --config names
	for _, arg := range pod.Containers[0].Command {
		if v, ok := strings.CutPrefix(arg, "--config="); ok {
			config = v
		}
	}
	require.NotEmpty(t, config)
	require.Len(t, pod.Volumes, 1)
	require.NotNil(t, pod.Volumes[0].ConfigMap)

	require.Len(t, k.ConfigMapGenerator, 1)
	g := k.ConfigMapGenerator[0]
	assert.Equal(t, pod.Volumes[0].ConfigMap.Name, g.Name, "kustomize renames the mounted ConfigMap to the generated one's name")
	assert.Equal(t, deploy.Namespace, g.Namespace)
	var keys []string
	for _, f := range g.Files {
		key, path, ok := strings.Cut(f, "=")
		if !ok {
			key, path = filepath.Base(f), f
		}
		keys = append(keys, key)
		listed = append(listed, path)
		loadsFineGrain(t, filepath.Join(dir, path))
	}
	mount := pod.Containers[0].VolumeMounts[0].MountPath
	assert.Contains(t, keys, strings.TrimPrefix(config, mount+"/"), "the generated ConfigMap holds the file --config reads")

	require.Len(t, k.Images, 1)
	image, _, _ := strings.Cut(pod.Containers[0].Image, ":")
	assert.Equal(t, image, k.Images[0].Name, "the image kustomize sets is the Deployment's")

	manifests, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	require.NoError(t, err)
	for _, m := range manifests {
		name := filepath.Base(m)
		if name == "scheduler-config-queues.yaml" || name == "scheduler-config-gpu.yaml" {
			assert.Contains(t, string(data), "="+name, "the kustomization's comment names the alternative %s", name)
			loadsFineGrain(t, m)
			continue
		}
		assert.True(t, slices.Contains(listed, name), "%s is in the kustomization", name)
	}
}

// loadsFineGrain checks that path is a scheduler configuration kube-scheduler's loader
// reads, of one profile whose FineGrain arguments decode.
func loadsFineGrain(t *testing.T, path string) {
	t.Helper()
	cfg, err := options.LoadConfigFromFile(klog.Background(), path)
	require.NoError(t, err, path)
	require.Len(t, cfg.Profiles, 1, path)
	found := false
	for _, pc := range cfg.Profiles[0].PluginConfig {
		if pc.Name == plugin.Name {
			_, err := plugin.DecodeArgs(pc.Args)
			require.NoError(t, err, path)
			found = true
		}
	}
	assert.True(t, found, "%s configures %s", path, plugin.Name)
}

// The Dockerfile stamps the versions: finegrain's into plugin.Version, and
// kube-scheduler's own (component-base) at the k8s.io/kubernetes version of go.mod.
func TestDockerfileStampsVersions(t *testing.T) {
	data, err := os.ReadFile("../Dockerfile")
	require.NoError(t, err)
	file := string(data)
	assert.Contains(t, file, "-X github.com/finegrain/finegrain/adapters/kubernetes/plugin.Version=${FINEGRAIN_VERSION}")
	assert.Contains(t, file, "-X k8s.io/component-base/version.gitVersion=${KUBERNETES_VERSION}")
	mod, err := os.ReadFile("../go.mod")
	require.NoError(t, err)
	var kube string
	for _, line := range strings.Split(string(mod), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "k8s.io/kubernetes" {
			kube = f[1]
		}
	}
	require.NotEmpty(t, kube, "go.mod requires k8s.io/kubernetes")
	assert.Contains(t, file, "ARG KUBERNETES_VERSION="+kube+"\n", "the image's kube-scheduler version is go.mod's")
}
