# What `cmake --install build --prefix P` puts in P (issue 27; docs/api.md, "Install"):
#   bin/syncpoint                          the command, finding the library through $ORIGIN
#   lib/libsyncpoint.so.<major.minor>      the library (+ the libsyncpoint.so link for linking)
#   lib/libsyncpoint-command.so.<m.m>      the command as a library (<syncpoint/command.hpp>)
#   include/syncpoint/*.hpp                the public headers, nothing else of the tree
#   lib/cmake/syncpoint/                   find_package(syncpoint CONFIG): syncpoint::syncpoint,
#                                          syncpoint::command, and with COMPONENTS torch, syncpoint::torch
#   lib/pkgconfig/syncpoint.pc             pkg-config --cflags --libs syncpoint
#   share/doc/syncpoint/                   README.md, docs/*.md, the examples
# Components: `runtime` (command, library, docs) and `dev` (headers, CMake and pkg-config
# files, the library's link, the examples): the Debian package splits along them.
include(CMakePackageConfigHelpers)
set(SYNCPOINT_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/syncpoint)

set_target_properties(syncpoint_cli PROPERTIES INSTALL_RPATH "$ORIGIN/../${CMAKE_INSTALL_LIBDIR}")
# The command library finds the library beside it (a RUNPATH serves direct dependencies only).
set_target_properties(syncpoint_command PROPERTIES INSTALL_RPATH "$ORIGIN")
install(TARGETS syncpoint syncpoint_command EXPORT syncpointTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT runtime NAMELINK_COMPONENT dev)
install(TARGETS syncpoint_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT runtime)
install(DIRECTORY include/syncpoint DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT dev
  FILES_MATCHING PATTERN "*.hpp")
install(FILES ${PROJECT_BINARY_DIR}/include/syncpoint/version.hpp
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/syncpoint COMPONENT dev)

install(EXPORT syncpointTargets NAMESPACE syncpoint:: DESTINATION ${SYNCPOINT_CMAKE_DIR} COMPONENT dev)
configure_package_config_file(cmake/syncpointConfig.cmake.in ${PROJECT_BINARY_DIR}/syncpointConfig.cmake
  INSTALL_DESTINATION ${SYNCPOINT_CMAKE_DIR})
# 0.x: a program built against 0.11 takes any 0.11.z, not 0.12 (the soname says the same).
write_basic_package_version_file(${PROJECT_BINARY_DIR}/syncpointConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/syncpointConfig.cmake ${PROJECT_BINARY_DIR}/syncpointConfigVersion.cmake
  DESTINATION ${SYNCPOINT_CMAKE_DIR} COMPONENT dev)

# The .pc file finds its prefix from where it lies, so a prefix may move.
file(RELATIVE_PATH SYNCPOINT_PC_TO_PREFIX /p/${CMAKE_INSTALL_LIBDIR}/pkgconfig /p)
configure_file(cmake/syncpoint.pc.in ${PROJECT_BINARY_DIR}/syncpoint.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/syncpoint.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT dev)

install(FILES README.md DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT runtime)
install(DIRECTORY docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs COMPONENT runtime
  FILES_MATCHING PATTERN "*.md" PATTERN plans EXCLUDE)
install(DIRECTORY examples/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples COMPONENT dev)
