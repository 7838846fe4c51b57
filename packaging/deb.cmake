# The Debian packages, made by cpack from a build configured for /usr (packaging/deb.sh):
#   profopt_VERSION_amd64.deb      the programs, libprofopt.so.0 (and libprofopt-cupti when
#                                  built), the Python module in /usr/lib/python3/dist-packages,
#                                  man pages, bash completion, README and LICENSE;
#   profopt-dev_VERSION_amd64.deb  profopt.h, libprofopt.so, profopt.pc and the CMake package.
# The shared libraries' dependencies come from dpkg-shlibdeps; what the programs run or load
# without linking it is named here.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME profopt)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR "profopt")
set(CPACK_PACKAGE_CONTACT "profopt maintainers <profopt@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
	"why an ML training pipeline is slow, from LTTng traces")
set(CPACK_PACKAGE_DESCRIPTION
	"profopt records LTTng-UST tracepoints of a training run and its data-loader workers
(profopt-record) and finds why it is slow (profopt-analyze): input stalls, GPU idle gaps,
memory growth, CPU contention, with evidence, recommendations and predicted gains, as an
HTML and PDF report, JSON and a Perfetto timeline.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL runtime dev)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME profopt)
set(CPACK_DEBIAN_DEV_PACKAGE_NAME profopt-dev)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SHLIBDEPS ON)
# lttng-sessiond (started by profopt-record), the fork and libc wrappers it preloads
# (liblttng-ust1), babeltrace2's ctf plugin (libbabeltrace2-0), the Python module's python3,
# yajl and zlib for torch.profiler traces (libyajl2, zlib1g).
set(CPACK_DEBIAN_RUNTIME_PACKAGE_DEPENDS "lttng-tools, liblttng-ust1, libbabeltrace2-0, python3, libyajl2, zlib1g")
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SUGGESTS "python3-torch, lttng-modules-dkms")
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS "profopt (= ${PROJECT_VERSION}), liblttng-ust-dev")
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(CPACK_COMPONENT_RUNTIME_DESCRIPTION "${CPACK_PACKAGE_DESCRIPTION}")
set(CPACK_COMPONENT_DEV_DESCRIPTION "profopt's header, pkg-config file and CMake package, to
instrument C and C++ programs with libprofopt.")
include(CPack)
