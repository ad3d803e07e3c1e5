/* Features softgpu does not provide (images, samplers, SVM, interop,
 * the deprecated hsa_code_object_t API) answer with errors, never success:
 * a null required argument is HSA_STATUS_ERROR_INVALID_ARGUMENT, a bad
 * agent HSA_STATUS_ERROR_INVALID_AGENT, anything else HSA_STATUS_ERROR.
 *
 * Prints OK on success; any failed expectation exits with status 1. */

#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>
#include <hsa/hsa_ext_image.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static hsa_status_t find_gpu(hsa_agent_t agent, void *data) {
    hsa_device_type_t type;
    CHECK(hsa_agent_get_info(agent, HSA_AGENT_INFO_DEVICE, &type));
    if (type == HSA_DEVICE_TYPE_GPU) {
        *(hsa_agent_t *)data = agent;
        return HSA_STATUS_INFO_BREAK;
    }
    return HSA_STATUS_SUCCESS;
}

int main(void) {
    hsa_ext_image_descriptor_t desc;
    memset(&desc, 0, sizeof desc);
    desc.geometry = HSA_EXT_IMAGE_GEOMETRY_2D;
    desc.width = 16;
    desc.height = 16;
    desc.format.channel_type = HSA_EXT_IMAGE_CHANNEL_TYPE_UNSIGNED_INT8;
    desc.format.channel_order = HSA_EXT_IMAGE_CHANNEL_ORDER_RGBA;
    char data[16 * 16 * 4];
    memset(data, 0, sizeof data);
    hsa_ext_image_t image = {0};
    hsa_agent_t gpu = {0};

    /* Before hsa_init. */
    EXPECT_STATUS(hsa_ext_image_create(gpu, &desc, data, HSA_ACCESS_PERMISSION_RW, &image),
                  HSA_STATUS_ERROR_NOT_INITIALIZED);

    CHECK(hsa_init());
    EXPECT_STATUS(hsa_iterate_agents(find_gpu, &gpu), HSA_STATUS_INFO_BREAK);

    /* Images and samplers. */
    hsa_agent_t forged = {0x1234};
    EXPECT_STATUS(hsa_ext_image_create(forged, &desc, data, HSA_ACCESS_PERMISSION_RW, &image),
                  HSA_STATUS_ERROR_INVALID_AGENT);
    EXPECT_STATUS(hsa_ext_image_create(gpu, NULL, data, HSA_ACCESS_PERMISSION_RW, &image),
                  HSA_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(hsa_ext_image_create(gpu, &desc, data, HSA_ACCESS_PERMISSION_RW, &image),
                  HSA_STATUS_ERROR);
    EXPECT_STATUS(hsa_ext_image_create_with_layout(gpu, &desc, data, HSA_ACCESS_PERMISSION_RW,
                                                   HSA_EXT_IMAGE_DATA_LAYOUT_LINEAR, 0, 0, &image),
                  HSA_STATUS_ERROR);
    uint32_t caps = 0;
    EXPECT_STATUS(hsa_ext_image_get_capability(gpu, HSA_EXT_IMAGE_GEOMETRY_2D, &desc.format, &caps),
                  HSA_STATUS_ERROR);
    hsa_ext_image_data_info_t info;
    EXPECT_STATUS(hsa_ext_image_data_get_info(gpu, &desc, HSA_ACCESS_PERMISSION_RW, &info),
                  HSA_STATUS_ERROR);
    hsa_ext_image_region_t region;
    memset(&region, 0, sizeof region);
    EXPECT_STATUS(hsa_ext_image_import(gpu, data, 0, 0, image, &region), HSA_STATUS_ERROR);
    EXPECT_STATUS(hsa_ext_image_export(gpu, image, data, 0, 0, &region), HSA_STATUS_ERROR);
    EXPECT_STATUS(hsa_ext_image_export(gpu, image, data, 0, 0, NULL), HSA_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(hsa_ext_image_destroy(gpu, image), HSA_STATUS_ERROR);
    hsa_ext_sampler_descriptor_t sdesc;
    memset(&sdesc, 0, sizeof sdesc);
    hsa_ext_sampler_t sampler = {0};
    EXPECT_STATUS(hsa_ext_sampler_create(gpu, &sdesc, &sampler), HSA_STATUS_ERROR);
    EXPECT_STATUS(hsa_ext_sampler_create(gpu, &sdesc, NULL), HSA_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(hsa_ext_sampler_destroy(gpu, sampler), HSA_STATUS_ERROR);
    hsa_amd_image_descriptor_t layout;
    memset(&layout, 0, sizeof layout);
    EXPECT_STATUS(hsa_amd_image_create(gpu, &desc, &layout, data, HSA_ACCESS_PERMISSION_RW, &image),
                  HSA_STATUS_ERROR);

    /* Interop and SVM. */
    size_t size = 0;
    void *ptr = NULL;
    EXPECT_STATUS(hsa_amd_interop_map_buffer(1, &gpu, 3, 0, &size, &ptr, NULL, NULL), HSA_STATUS_ERROR);
    EXPECT_STATUS(hsa_amd_interop_unmap_buffer(data), HSA_STATUS_ERROR);
    hsa_amd_svm_attribute_pair_t attr = {HSA_AMD_SVM_ATTRIB_GLOBAL_FLAG, 0};
    EXPECT_STATUS(hsa_amd_svm_attributes_set(data, sizeof data, &attr, 1), HSA_STATUS_ERROR);
    EXPECT_STATUS(hsa_amd_svm_attributes_get(data, sizeof data, &attr, 1), HSA_STATUS_ERROR);
    EXPECT_STATUS(hsa_amd_svm_attributes_get(data, sizeof data, NULL, 1), HSA_STATUS_ERROR_INVALID_ARGUMENT);
    hsa_signal_t none = {0};
    EXPECT_STATUS(hsa_amd_svm_prefetch_async(data, sizeof data, gpu, 0, NULL, none), HSA_STATUS_ERROR);

    /* The deprecated code object API. */
    hsa_code_object_t co = {0};
    EXPECT_STATUS(hsa_code_object_deserialize(data, sizeof data, NULL, &co), HSA_STATUS_ERROR);
    EXPECT_STATUS(hsa_code_object_destroy(co), HSA_STATUS_ERROR);

    CHECK(hsa_shut_down());
    printf("OK absent\n");
    return 0;
}
