# The Python package `syncpoint` (python/; docs/python.md): the extension _syncpoint (pybind11)
# beside the package's .py and .pyi files, in build/python/syncpoint/, so that
# PYTHONPATH=build/python imports it from the build tree. Built where Debian's python3 with its
# headers, pybind11 and python3-torch are found (scripts/setup.sh installs them); a line says why
# not otherwise. Installed as P/lib/python3/dist-packages/syncpoint (component `python`: the
# Debian package python3-syncpoint).
option(SYNCPOINT_PYTHON "build the Python package syncpoint (python/)" ON)
set(SYNCPOINT_PYTHON_BUILT OFF CACHE INTERNAL "whether the Python package is built (scripts/test-package.sh reads it)")
if(SYNCPOINT_PYTHON)
  # Debian's python3 is the one python3-torch is built for (a python3 of pyenv's may come first on PATH).
  if(NOT DEFINED Python3_EXECUTABLE AND EXISTS /usr/bin/python3)
    set(Python3_EXECUTABLE /usr/bin/python3)
  endif()
  find_package(Python3 COMPONENTS Interpreter Development.Module)
  if(Python3_FOUND)
    # Debian's pybind11 (2.10) builds through FindPython3's targets, pip's (the GPU machine's)
    # through FindPython's: the same python3 found both ways serves either.
    set(Python_EXECUTABLE ${Python3_EXECUTABLE})
    find_package(Python COMPONENTS Interpreter Development.Module QUIET)
  endif()
  find_package(pybind11 CONFIG QUIET)
  set(syncpoint_python_missing "")
  if(NOT Python3_FOUND)
    set(syncpoint_python_missing "python3's headers (apt-get install python3-dev)")
  elseif(NOT pybind11_FOUND)
    set(syncpoint_python_missing "pybind11 (apt-get install pybind11-dev)")
  else()
    execute_process(COMMAND ${Python3_EXECUTABLE} -c "import torch, numpy" RESULT_VARIABLE syncpoint_torch_import
                    OUTPUT_QUIET ERROR_QUIET)
    if(NOT syncpoint_torch_import EQUAL 0)
      set(syncpoint_python_missing "torch for ${Python3_EXECUTABLE} (apt-get install python3-torch)")
    endif()
  endif()
  if(syncpoint_python_missing)
    message(STATUS "Python package syncpoint: not built, it needs ${syncpoint_python_missing}")
  else()
    set(SYNCPOINT_PYTHON_BUILT ON CACHE INTERNAL "whether the Python package is built (scripts/test-package.sh reads it)")
    math(EXPR syncpoint_python_next_minor "${Python3_VERSION_MINOR} + 1")  # the package's python3 (<< 3.N+1)
    message(STATUS "Python package syncpoint: for ${Python3_EXECUTABLE} (${Python3_VERSION})")
  endif()
endif()

if(SYNCPOINT_PYTHON_BUILT)
  set(SYNCPOINT_PYTHON_DIR ${PROJECT_BINARY_DIR}/python/syncpoint)
  pybind11_add_module(syncpoint_python MODULE NO_EXTRAS python/module.cpp python/jobs.cpp python/models.cpp python/loops.cpp python/protocols.cpp)
  set_target_properties(syncpoint_python PROPERTIES OUTPUT_NAME _syncpoint LIBRARY_OUTPUT_DIRECTORY ${SYNCPOINT_PYTHON_DIR})
  target_link_libraries(syncpoint_python PRIVATE syncpoint_command syncpoint_internal syncpoint_option_table)
  # The package's Python files, copied beside the extension (again whenever one changes).
  file(GLOB syncpoint_python_files LIST_DIRECTORIES false CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/python/syncpoint/*.py
       ${CMAKE_CURRENT_SOURCE_DIR}/python/syncpoint/*.pyi ${CMAKE_CURRENT_SOURCE_DIR}/python/syncpoint/py.typed)
  foreach(f ${syncpoint_python_files})
    get_filename_component(name ${f} NAME)
    configure_file(${f} ${SYNCPOINT_PYTHON_DIR}/${name} COPYONLY)
  endforeach()

  set(SYNCPOINT_PYTHON_INSTALL_DIR lib/python3/dist-packages/syncpoint)
  file(RELATIVE_PATH syncpoint_python_to_lib /p/${SYNCPOINT_PYTHON_INSTALL_DIR} /p/${CMAKE_INSTALL_LIBDIR})
  set_target_properties(syncpoint_python PROPERTIES INSTALL_RPATH "$ORIGIN/${syncpoint_python_to_lib}")
  install(TARGETS syncpoint_python LIBRARY DESTINATION ${SYNCPOINT_PYTHON_INSTALL_DIR} COMPONENT python)
  install(FILES ${syncpoint_python_files} DESTINATION ${SYNCPOINT_PYTHON_INSTALL_DIR} COMPONENT python)

  # The package's tests (tests/python/, pytest), one ctest test a file, with the command and the
  # programs they compare against.
  file(GLOB syncpoint_python_tests CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/tests/python/test_*.py)
  foreach(test_file ${syncpoint_python_tests})
    get_filename_component(test_name ${test_file} NAME_WE)
    add_test(NAME python_${test_name}
      COMMAND ${CMAKE_COMMAND} -E env PYTHONPATH=${PROJECT_BINARY_DIR}/python SYNCPOINT_CLI=$<TARGET_FILE:syncpoint_cli>
              SYNCPOINT_EXAMPLE_CUSTOM_PROTOCOL=$<TARGET_FILE:example_custom_protocol> PYTHONDONTWRITEBYTECODE=1
              ${Python3_EXECUTABLE} -m pytest -q -p no:cacheprovider ${test_file})
    set_tests_properties(python_${test_name} PROPERTIES TIMEOUT 900)
  endforeach()
endif()
