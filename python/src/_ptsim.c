/* _ptsim.c — ptsim._ptsim, the CPython extension over libptsim
 * (include/ptsim.h): the few calls the Python package (python/ptsim) is
 * built on.  Objects are capsules of the library's opaque objects, freed by
 * their destructors; every failure becomes a Python exception carrying the
 * command's one-line message and exit status (never a crash: arguments are
 * checked here before the library sees them).  predict and sweep release
 * the GIL while the library computes; a sweep's rows are handed to Python
 * with it held again, one row at a time. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <ptsim.h>
#include <string.h>

static PyObject *Error, *InputError, *InvalidJob, *GPUUnavailableError, *InternalError;

static const char MODEL[] = "ptsim.model", HARDWARE[] = "ptsim.hardware", JOB[] = "ptsim.job";

/* ---- errors ---- */

/* Raises the Python exception for ERROR (consumed): InvalidJob for bad
 * input when JOB_ERROR (building or predicting a job), InputError for other
 * bad input; the message, exit status and diagnostics as attributes. */
static void raise_error(PtsimApiError *error, int job_error) {
  if (!error) {
    PyErr_SetString(InternalError, "libptsim failed without a reason");
    return;
  }
  PyObject *type = InternalError;
  switch (ptsim_api_error_code(error)) {
  case PTSIM_API_ERROR_INPUT:
    type = job_error ? InvalidJob : InputError;
    break;
  case PTSIM_API_ERROR_GPU_UNAVAILABLE:
    type = GPUUnavailableError;
    break;
  default:
    break;
  }
  const char *message = ptsim_api_error_message(error);
  PyObject *exc = PyObject_CallFunction(type, "s", message ? message : "");
  if (exc) {
    size_t n = ptsim_api_error_diagnostic_count(error);
    PyObject *diag = PyTuple_New((Py_ssize_t)n);
    for (size_t i = 0; diag && i < n; i++) {
      PyObject *line =
          PyUnicode_DecodeUTF8(ptsim_api_error_diagnostic(error, i),
                               (Py_ssize_t)strlen(ptsim_api_error_diagnostic(error, i)), "replace");
      if (!line)
        Py_CLEAR(diag);
      else
        PyTuple_SET_ITEM(diag, (Py_ssize_t)i, line);
    }
    PyObject *status = PyLong_FromLong(ptsim_api_error_exit_status(error));
    if (diag && status && PyObject_SetAttrString(exc, "exit_status", status) == 0 &&
        PyObject_SetAttrString(exc, "diagnostics", diag) == 0)
      PyErr_SetObject(type, exc);
    Py_XDECREF(diag);
    Py_XDECREF(status);
    Py_DECREF(exc);
  }
  ptsim_api_error_free(error);
}

/* ---- arguments ---- */

/* The UTF-8 of OBJ, a str without NUL characters; NULL with an exception. */
static const char *text(PyObject *obj, const char *what) {
  if (!PyUnicode_Check(obj)) {
    PyErr_Format(PyExc_TypeError, "%s must be str, not %.100s", what, Py_TYPE(obj)->tp_name);
    return NULL;
  }
  Py_ssize_t len;
  const char *s = PyUnicode_AsUTF8AndSize(obj, &len);
  if (s && (size_t)len != strlen(s)) {
    PyErr_Format(PyExc_ValueError, "%s contains a NUL character", what);
    return NULL;
  }
  return s;
}

/* A NULL-terminated array of the str items of SEQ (a list or tuple), taken
 * from a tuple copy of it in *HOLD, which keeps them alive while the GIL is
 * released (another thread may change the list meanwhile); NULL with an
 * exception.  The caller frees the array with PyMem_Free and drops *HOLD. */
static const char **words(PyObject *seq, const char *what, PyObject **hold) {
  *hold = NULL;
  if (!PyList_Check(seq) && !PyTuple_Check(seq)) {
    PyErr_Format(PyExc_TypeError, "%s must be a list of str, not %.100s", what,
                 Py_TYPE(seq)->tp_name);
    return NULL;
  }
  PyObject *items = PySequence_Tuple(seq);
  if (!items) return NULL;
  Py_ssize_t n = PyTuple_GET_SIZE(items);
  const char **out = PyMem_Calloc((size_t)n + 1, sizeof *out);
  if (!out) {
    Py_DECREF(items);
    return (const char **)PyErr_NoMemory();
  }
  for (Py_ssize_t i = 0; i < n; i++) {
    out[i] = text(PyTuple_GET_ITEM(items, i), what);
    if (!out[i]) {
      PyMem_Free(out);
      Py_DECREF(items);
      return NULL;
    }
  }
  *hold = items;
  return out;
}

/* The library object in capsule OBJ named NAME, or NULL (None allowed
 * when OPTIONAL; *ok 0 with an exception otherwise). */
static void *unwrap(PyObject *obj, const char *name, int optional, int *ok) {
  *ok = 1;
  if (optional && obj == Py_None) return NULL;
  void *p = PyCapsule_IsValid(obj, name) ? PyCapsule_GetPointer(obj, name) : NULL;
  if (!p) {
    PyErr_Format(PyExc_TypeError, "expected a %s handle, not %.100s", name, Py_TYPE(obj)->tp_name);
    *ok = 0;
  }
  return p;
}

static void free_model(PyObject *c) { ptsim_api_model_free(PyCapsule_GetPointer(c, MODEL)); }
static void free_hardware(PyObject *c) {
  ptsim_api_hardware_free(PyCapsule_GetPointer(c, HARDWARE));
}
static void free_job(PyObject *c) { ptsim_api_job_free(PyCapsule_GetPointer(c, JOB)); }

/* ---- models, hardware ---- */

static PyObject *model_load(PyObject *self, PyObject *arg) {
  (void)self;
  const char *name = text(arg, "the model");
  if (!name) return NULL;
  PtsimApiError *error = NULL;
  PtsimApiModel *m = ptsim_api_model_load(name, &error);
  if (!m) {
    raise_error(error, 0);
    return NULL;
  }
  PyObject *cap = PyCapsule_New(m, MODEL, free_model);
  if (!cap) ptsim_api_model_free(m);
  return cap;
}

static PyObject *hardware_load(PyObject *self, PyObject *arg) {
  (void)self;
  const char *name = text(arg, "the hardware profile");
  if (!name) return NULL;
  PtsimApiError *error = NULL;
  PtsimApiHardware *hw = ptsim_api_hardware_load(name, &error);
  if (!hw) {
    raise_error(error, 0);
    return NULL;
  }
  PyObject *cap = PyCapsule_New(hw, HARDWARE, free_hardware);
  if (!cap) ptsim_api_hardware_free(hw);
  return cap;
}

static PyObject *model_name(PyObject *self, PyObject *arg) {
  (void)self;
  int ok;
  const PtsimApiModel *m = unwrap(arg, MODEL, 0, &ok);
  return ok ? PyUnicode_FromString(ptsim_api_model_name(m)) : NULL;
}

static PyObject *hardware_name(PyObject *self, PyObject *arg) {
  (void)self;
  int ok;
  const PtsimApiHardware *hw = unwrap(arg, HARDWARE, 0, &ok);
  return ok ? PyUnicode_FromString(ptsim_api_hardware_name(hw)) : NULL;
}

/* ---- jobs ---- */

/* job_new(flags, model or None, hw or None) -> (job, diagnostics) */
static PyObject *job_new(PyObject *self, PyObject *args) {
  (void)self;
  PyObject *flags_obj, *model_obj, *hw_obj;
  if (!PyArg_ParseTuple(args, "OOO:job_new", &flags_obj, &model_obj, &hw_obj)) return NULL;
  int ok_m, ok_h;
  const PtsimApiModel *m = unwrap(model_obj, MODEL, 1, &ok_m);
  if (!ok_m) return NULL;
  const PtsimApiHardware *hw = unwrap(hw_obj, HARDWARE, 1, &ok_h);
  if (!ok_h) return NULL;
  PyObject *hold;
  const char **flags = words(flags_obj, "the job's flags", &hold);
  if (!flags) return NULL;
  PtsimApiError *error = NULL;
  PtsimApiJob *job;
  PyThreadState *released = PyEval_SaveThread(); /* Py_BEGIN_ALLOW_THREADS */
  job = ptsim_api_job_new(flags, m, hw, &error);
  PyEval_RestoreThread(released); /* Py_END_ALLOW_THREADS */
  PyMem_Free(flags);
  Py_DECREF(hold);
  if (!job) {
    raise_error(error, 1);
    return NULL;
  }
  PyObject *cap = PyCapsule_New(job, JOB, free_job);
  if (!cap) {
    ptsim_api_job_free(job);
    return NULL;
  }
  size_t n = ptsim_api_job_diagnostic_count(job);
  PyObject *diag = PyTuple_New((Py_ssize_t)n);
  for (size_t i = 0; diag && i < n; i++) {
    const char *line = ptsim_api_job_diagnostic(job, i, NULL);
    PyObject *s = PyUnicode_DecodeUTF8(line, (Py_ssize_t)strlen(line), "replace");
    if (!s)
      Py_CLEAR(diag);
    else
      PyTuple_SET_ITEM(diag, (Py_ssize_t)i, s);
  }
  if (!diag) {
    Py_DECREF(cap);
    return NULL;
  }
  return Py_BuildValue("(NN)", cap, diag);
}

/* A number, or None for NaN (none computed). */
static PyObject *number(double x) {
  if (isnan(x)) Py_RETURN_NONE;
  return PyFloat_FromDouble(x);
}

static PyObject *verdict(int v) {
  if (v < 0) Py_RETURN_NONE;
  return PyBool_FromLong(v);
}

/* predict(job, options, memory_only) -> dict of the result's numbers and
 * its JSON text. */
static PyObject *predict(PyObject *self, PyObject *args) {
  (void)self;
  PyObject *job_obj, *opts_obj;
  int memory_only;
  if (!PyArg_ParseTuple(args, "OOp:predict", &job_obj, &opts_obj, &memory_only)) return NULL;
  int ok;
  const PtsimApiJob *job = unwrap(job_obj, JOB, 0, &ok);
  if (!ok) return NULL;
  PyObject *hold;
  const char **opts = words(opts_obj, "the prediction's options", &hold);
  if (!opts) return NULL;
  PtsimApiError *error = NULL;
  PtsimApiResult *r;
  const char *json = NULL;
  size_t len = 0;
  /* the job capsule is held by the caller's arguments throughout */
  PyThreadState *released = PyEval_SaveThread(); /* Py_BEGIN_ALLOW_THREADS */
  r = memory_only ? ptsim_api_memory(job, opts, &error) : ptsim_api_predict(job, opts, &error);
  if (r) json = ptsim_api_result_json(r, &len);
  PyEval_RestoreThread(released); /* Py_END_ALLOW_THREADS */
  PyMem_Free(opts);
  Py_DECREF(hold);
  if (!r) {
    raise_error(error, 1);
    return NULL;
  }
  PyObject *out = Py_BuildValue("{s:s#,s:N,s:N,s:N,s:N,s:N,s:N,s:N,s:N,s:N}", "json", json,
                                (Py_ssize_t)len, "step_s", number(ptsim_api_result_step_s(r)),
                                "tokens_per_s", number(ptsim_api_result_tokens_per_s(r)),
                                "tflops_per_gpu", number(ptsim_api_result_tflops_per_gpu(r)), "mfu",
                                number(ptsim_api_result_mfu(r)), "memory_bytes",
                                number(ptsim_api_result_memory_bytes(r)), "capacity_bytes",
                                number(ptsim_api_result_capacity_bytes(r)), "device_peak_bytes",
                                number(ptsim_api_result_device_peak_bytes(r)), "fits",
                                verdict(ptsim_api_result_fits(r)), "runs",
                                verdict(ptsim_api_result_runs(r)));
  ptsim_api_result_free(r);
  return out;
}

/* ---- sweeps ---- */

typedef struct {
  PyThreadState *released; /* the saved thread state while the library runs */
  PyObject *callback;      /* callable(names, values) or None */
  PyObject *rows;          /* list of value tuples, when no callback */
  PyObject *names;         /* the header, a tuple (set on the first row) */
  int typed;               /* numbers as int and float */
  int failed;              /* a Python exception is pending */
  int stopped_by_caller;   /* the callback returned False */
} SweepState;

/* A CSV cell as Python has it: with TYPED, an int where the cell is
 * digits (with a sign), a float where it is a decimal number (C-locale
 * text: digits, sign, point, exponent), else the word as str. */
static PyObject *cell(const char *c, int typed) {
  size_t len = strlen(c);
  if (typed && len > 0 && len < 64) {
    int digits = 0, other = 0;
    for (const char *p = c; *p; p++) {
      if (*p >= '0' && *p <= '9')
        digits++;
      else if (*p == '.' || *p == 'e' || *p == 'E')
        other++;
      else if (!((*p == '-' || *p == '+') && (p == c || p[-1] == 'e' || p[-1] == 'E')))
        other = 1000;
    }
    if (digits > 0 && other == 0) return PyLong_FromString(c, NULL, 10);
    if (digits > 0 && other < 1000) {
      char *end;
      double x = PyOS_string_to_double(c, &end, NULL);
      if (*end == '\0' && !(x == -1.0 && PyErr_Occurred())) return PyFloat_FromDouble(x);
      PyErr_Clear();
    }
  }
  return PyUnicode_DecodeUTF8(c, (Py_ssize_t)len, "replace");
}

static PyObject *str_tuple(size_t n, const char *const *cells, int typed) {
  PyObject *t = PyTuple_New((Py_ssize_t)n);
  for (size_t i = 0; t && i < n; i++) {
    PyObject *s = cell(cells[i], typed);
    if (!s)
      Py_CLEAR(t);
    else
      PyTuple_SET_ITEM(t, (Py_ssize_t)i, s);
  }
  return t;
}

/* PtsimApiRowFn: takes the GIL back for the row, then releases it again. */
static int on_row(void *user_data, size_t n, const char *const *names, const char *const *values) {
  SweepState *st = user_data;
  PyEval_RestoreThread(st->released);
  int stop = 0;
  if (!st->names) st->names = str_tuple(n, names, 0);
  PyObject *row = st->names ? str_tuple(n, values, st->typed) : NULL;
  if (!row) {
    stop = 1;
  } else if (st->callback != Py_None) {
    PyObject *ret = PyObject_CallFunctionObjArgs(st->callback, st->names, row, NULL);
    if (!ret)
      stop = 1;
    else if (ret == Py_False)
      stop = st->stopped_by_caller = 1;
    Py_XDECREF(ret);
  } else if (PyList_Append(st->rows, row) < 0) {
    stop = 1;
  }
  Py_XDECREF(row);
  if (stop && !st->stopped_by_caller) st->failed = 1;
  st->released = PyEval_SaveThread();
  return stop;
}

/* sweep(flags, callback or None, typed=False, shards=None, csv=None) ->
 * (names, rows); names None when no row came; rows empty with a callback.
 * With SHARDS (a list of paths): the merge of those shard files
 * (ptsim_api_sweep_merge), its CSV written to CSV when given. */
static PyObject *sweep(PyObject *self, PyObject *args) {
  (void)self;
  PyObject *flags_obj, *callback, *shards_obj = Py_None;
  const char *csv = NULL;
  int typed = 0;
  if (!PyArg_ParseTuple(args, "OO|pOz:sweep", &flags_obj, &callback, &typed, &shards_obj, &csv))
    return NULL;
  if (callback != Py_None && !PyCallable_Check(callback)) {
    PyErr_Format(PyExc_TypeError, "callback must be callable, not %.100s",
                 Py_TYPE(callback)->tp_name);
    return NULL;
  }
  PyObject *hold;
  const char **flags = words(flags_obj, "the sweep's flags", &hold);
  if (!flags) return NULL;
  PyObject *shards_hold = NULL;
  const char **shards = NULL;
  if (shards_obj != Py_None && !(shards = words(shards_obj, "the shard files", &shards_hold))) {
    PyMem_Free(flags);
    Py_DECREF(hold);
    return NULL;
  }
  SweepState st = {NULL, callback, PyList_New(0), NULL, typed, 0, 0};
  if (!st.rows) {
    PyMem_Free(flags);
    PyMem_Free(shards);
    Py_DECREF(hold);
    Py_XDECREF(shards_hold);
    return NULL;
  }
  PtsimApiError *error = NULL;
  st.released = PyEval_SaveThread();
  int rc = shards ? ptsim_api_sweep_merge(flags, shards, csv, on_row, &st, &error)
                  : ptsim_api_sweep(flags, on_row, &st, &error);
  PyEval_RestoreThread(st.released);
  PyMem_Free(flags);
  PyMem_Free(shards);
  Py_DECREF(hold);
  Py_XDECREF(shards_hold);
  if (rc != 0 && (st.failed || st.stopped_by_caller)) {
    ptsim_api_error_free(error);
    if (st.failed) {
      if (!PyErr_Occurred()) PyErr_SetString(InternalError, "the sweep's rows failed");
      Py_DECREF(st.rows);
      Py_XDECREF(st.names);
      return NULL;
    }
  } else if (rc != 0) {
    raise_error(error, 0);
    Py_DECREF(st.rows);
    Py_XDECREF(st.names);
    return NULL;
  }
  return Py_BuildValue("(NN)", st.names ? st.names : Py_NewRef(Py_None), st.rows);
}

/* sweep_shard(flags, k, n, path) -> int: shard K of N of the sweep written
 * to PATH (ptsim_api_sweep_shard), the layouts it holds. */
static PyObject *sweep_shard(PyObject *self, PyObject *args) {
  (void)self;
  PyObject *flags_obj;
  unsigned int k, n;
  const char *path;
  if (!PyArg_ParseTuple(args, "OIIs:sweep_shard", &flags_obj, &k, &n, &path)) return NULL;
  PyObject *hold;
  const char **flags = words(flags_obj, "the sweep's flags", &hold);
  if (!flags) return NULL;
  PtsimApiError *error = NULL;
  long long written;
  PyThreadState *released = PyEval_SaveThread();
  written = ptsim_api_sweep_shard(flags, k, n, path, &error);
  PyEval_RestoreThread(released);
  PyMem_Free(flags);
  Py_DECREF(hold);
  if (written < 0) {
    raise_error(error, 0);
    return NULL;
  }
  return PyLong_FromLongLong(written);
}

/* plot(kind, from, out, options) -> None: the figure of ptsim_api_plot. */
static PyObject *plot(PyObject *self, PyObject *args) {
  (void)self;
  const char *kind, *from, *out;
  PyObject *options_obj;
  if (!PyArg_ParseTuple(args, "sssO:plot", &kind, &from, &out, &options_obj)) return NULL;
  PyObject *hold;
  const char **options = words(options_obj, "the figure's options", &hold);
  if (!options) return NULL;
  PtsimApiError *error = NULL;
  PyThreadState *released = PyEval_SaveThread();
  int rc = ptsim_api_plot(kind, from, out, options, &error);
  PyEval_RestoreThread(released);
  PyMem_Free(options);
  Py_DECREF(hold);
  if (rc != 0) {
    raise_error(error, 0);
    return NULL;
  }
  Py_RETURN_NONE;
}

static PyObject *version(PyObject *self, PyObject *unused) {
  (void)self;
  (void)unused;
  return PyUnicode_FromString(ptsim_api_version_string());
}

static PyMethodDef methods[] = {
    {"version", version, METH_NOARGS, "version() -> str: the loaded libptsim's version."},
    {"model_load", model_load, METH_O, "model_load(name_or_path) -> model handle."},
    {"model_name", model_name, METH_O, "model_name(handle) -> str."},
    {"hardware_load", hardware_load, METH_O, "hardware_load(name_or_path) -> hardware handle."},
    {"hardware_name", hardware_name, METH_O, "hardware_name(handle) -> str."},
    {"job_new", job_new, METH_VARARGS,
     "job_new(flags, model, hw) -> (job handle, diagnostics): the job `ptsim predict FLAGS` "
     "builds."},
    {"predict", predict, METH_VARARGS,
     "predict(job, options, memory_only) -> dict: the numbers and the --format json text."},
    {"sweep", sweep, METH_VARARGS,
     "sweep(flags, callback, typed=False) -> (names, rows): the rows of `ptsim sweep FLAGS --csv "
     "FILE`, as tuples of str (typed: numbers as int and float), or each handed to "
     "callback(names, row) (return False to stop).  shards=[paths]: the merge of those shard "
     "files instead (its CSV written to csv when given)."},
    {"plot", plot, METH_VARARGS,
     "plot(kind, from, out, options) -> None: the figure of `ptsim plot KIND --from FROM --out "
     "OUT OPTIONS` (heatmap, pareto, scaling, validation), with its .gp and .tsv."},
    {"sweep_shard", sweep_shard, METH_VARARGS,
     "sweep_shard(flags, k, n, path) -> int: the shard file of `ptsim sweep FLAGS --shard K/N "
     "--csv PATH`, the layouts it holds."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT,
                                    "ptsim._ptsim",
                                    "The CPython extension over libptsim (include/ptsim.h); use "
                                    "the ptsim package.",
                                    -1,
                                    methods,
                                    NULL,
                                    NULL,
                                    NULL,
                                    NULL};

/* An exception class NAME with DOC and BASES (a new tuple, consumed), added
 * to M; NULL on failure. */
static PyObject *add_exception(PyObject *m, const char *name, const char *doc, PyObject *bases) {
  if (!bases) return NULL;
  char qualified[64];
  snprintf(qualified, sizeof qualified, "ptsim.%s", name);
  PyObject *type = PyErr_NewExceptionWithDoc(qualified, doc, bases, NULL);
  Py_DECREF(bases);
  if (!type || PyModule_AddObjectRef(m, name, type) < 0) {
    Py_XDECREF(type);
    return NULL;
  }
  return type;
}

PyMODINIT_FUNC PyInit__ptsim(void) {
  if (ptsim_api_version() / 10000 != PTSIM_VERSION_MAJOR) {
    PyErr_Format(PyExc_ImportError, "libptsim %s is not version %d.x", ptsim_api_version_string(),
                 PTSIM_VERSION_MAJOR);
    return NULL;
  }
  PyObject *m = PyModule_Create(&module);
  if (!m) return NULL;
  Error = add_exception(m, "Error",
                        "A ptsim failure; .exit_status is the command's exit status for it, "
                        ".diagnostics the warnings the inputs gave before it.",
                        PyTuple_Pack(1, PyExc_Exception));
  if (Error)
    InputError = add_exception(m, "InputError",
                               "Bad input: an unknown model or profile, a bad flag or value, a "
                               "malformed file (the command exits 2).",
                               PyTuple_Pack(2, Error, PyExc_ValueError));
  if (InputError)
    InvalidJob = add_exception(m, "InvalidJob",
                               "A job that cannot be built or predicted: a bad flag, value or "
                               "layout (the command exits 2).",
                               PyTuple_Pack(1, InputError));
  if (InvalidJob)
    GPUUnavailableError = add_exception(m, "GPUUnavailableError",
                                        "device='gpu' was asked for and there is none.",
                                        PyTuple_Pack(1, Error));
  if (GPUUnavailableError)
    InternalError = add_exception(m, "InternalError",
                                  "A failure the input does not explain (a write; the command "
                                  "exits 1).",
                                  PyTuple_Pack(2, Error, PyExc_RuntimeError));
  if (!InternalError) {
    Py_DECREF(m);
    return NULL;
  }
  return m;
}
