# `cpack -G DEB` in the build folder makes syncpoint_<version>_amd64.deb: everything
# `cmake --install` puts in a prefix (cmake/install.cmake), under /usr. Its Depends come from
# dpkg-shlibdeps over the command and the library (the Debian packages of every library they
# load); scripts/test-package.sh checks them on an empty package database (docs/api.md, "The
# Debian package").
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME syncpoint)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR syncpoint)
set(CPACK_PACKAGE_CONTACT "syncpoint developers <syncpoint@users.noreply.github.com>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
  "actor runtime for data-parallel training with a parameter server and pluggable synchronization protocols")
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION "The syncpoint command, library, headers and CMake package.
 syncpoint trains models with a parameter server, workers and a sync coordinator as CAF
 actors, in one process or across machines, under BSP, ASP, SSP, ElasticBSP, WBSP, R2SP,
 Sync-Switch or a protocol of your own, on the real clock or in deterministic virtual time.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)          # syncpoint_0.11.0_amd64.deb
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)     # and the ldconfig trigger for libsyncpoint.so.0.11
# The BLAS measured in docs/architecture.md and the default data set; a program of your own needs
# CAF's headers (LibTorch's, to define a model; cereal's, for a protocol that checkpoints).
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "libopenblas0-pthread, dataset-fashion-mnist")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "libcaf-dev, libtorch-dev, libcereal-dev, pkgconf")
include(CPack)
