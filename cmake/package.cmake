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
# Two packages, by install component: syncpoint (runtime and dev) and, where the Python package
# is built, python3-syncpoint (component python: the package syncpoint for Debian's python3), so
# that the C++ package needs no Python.
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_GROUPING ONE_PER_GROUP)
set(CPACK_DEBIAN_MAIN_PACKAGE_NAME syncpoint)
set(CPACK_DEBIAN_MAIN_FILE_NAME syncpoint_${PROJECT_VERSION}_amd64.deb)
set(CPACK_DEBIAN_PYTHON_PACKAGE_NAME python3-syncpoint)
set(CPACK_DEBIAN_PYTHON_FILE_NAME python3-syncpoint_${PROJECT_VERSION}_amd64.deb)
set(CPACK_DEBIAN_PYTHON_PACKAGE_SECTION python)
# The extension loads the library of the syncpoint package (whose own Depends cover the rest) and
# runs under Debian's python3 with its torch: dpkg-shlibdeps would look for libsyncpoint in vain.
set(CPACK_DEBIAN_PYTHON_PACKAGE_SHLIBDEPS OFF)
set(CPACK_DEBIAN_PYTHON_PACKAGE_DEPENDS
  "syncpoint (= ${PROJECT_VERSION}), python3 (>= ${Python3_VERSION_MAJOR}.${Python3_VERSION_MINOR}), python3 (<< ${Python3_VERSION_MAJOR}.${syncpoint_python_next_minor}), python3-torch, python3-numpy")
set(CPACK_DEBIAN_PYTHON_DESCRIPTION "syncpoint from Python: import syncpoint
 Run, compare and sweep syncpoint's synchronization protocols from Python, with
 models scripted in PyTorch, loops and protocols written in Python.")
include(CPack)
cpack_add_component_group(main)
cpack_add_component_group(python)
cpack_add_component(runtime GROUP main)
cpack_add_component(dev GROUP main)
if(SYNCPOINT_PYTHON_BUILT)
  cpack_add_component(python GROUP python)
endif()
