# The container image, built and run for real with podman (deploy/image/).
#   make image        engine + local Debian base (once, cached) + deploy/Dockerfile
#   make test-image   the container smoke test: seven services from the image, like k8s/ runs them
IMAGE ?= localhost/tabletop:latest
# podman's images live in the project's cache (deploy/image/store.sh), never /var/lib/containers;
# exported, so every podman call of a recipe (and of the tests it runs) uses that store.
export CONTAINERS_STORAGE_CONF ?= $(abspath .cache/podman/storage.conf)
IMAGE_BASE ?= localhost/tabletop-base:bookworm

.PHONY: image test-image

image: web  ## build the image with podman from a local Debian base (no registry needed)
	@IMAGE=$(IMAGE) IMAGE_BASE=$(IMAGE_BASE) deploy/image/build.sh

test-image: install tools-kustomize kafka image  ## run the seven services from the image against Kafka
	TABLETOP_IMAGE_TEST=1 TABLETOP_IMAGE=$(IMAGE) $(VENV)/bin/pytest -q -ra --timeout=600 \
	  tests/integration/test_image.py
