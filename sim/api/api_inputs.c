/* api_inputs.c — models and hardware profiles loaded once, for many jobs;
 * see ptsim.h.  Read by config.c exactly as --model and --hw are. */
#include "api_int.h"

#include "config.h"

PtsimApiModel *ptsim_api_model_load(const char *name_or_path, PtsimApiError **error) {
  g_autoptr(GError) local = NULL;
  g_autoptr(PtsimApiModel) model = g_new0(PtsimApiModel, 1);
  if (!ptsim_model_load(name_or_path, &model->model, &local)) {
    ptsim_api_error_set(error, local, NULL);
    return NULL;
  }
  return g_steal_pointer(&model);
}

const char *ptsim_api_model_name(const PtsimApiModel *model) {
  return model ? model->model.name : NULL;
}

void ptsim_api_model_free(PtsimApiModel *model) { g_free(model); }

PtsimApiHardware *ptsim_api_hardware_load(const char *name_or_path, PtsimApiError **error) {
  g_autoptr(GError) local = NULL;
  g_autoptr(PtsimApiHardware) hw = g_new0(PtsimApiHardware, 1);
  if (!ptsim_hardware_load(name_or_path, &hw->hw, &local)) {
    ptsim_api_error_set(error, local, NULL);
    return NULL;
  }
  return g_steal_pointer(&hw);
}

const char *ptsim_api_hardware_name(const PtsimApiHardware *hw) { return hw ? hw->hw.name : NULL; }

void ptsim_api_hardware_free(PtsimApiHardware *hw) { g_free(hw); }
