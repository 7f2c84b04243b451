"""Text preprocessing: Moses tokenization, CJK segmentation and bunsetsu, English trees with
head finalization and PMASS spans, subword models. Each step maps lines to lines."""
