/*
 * What each Opus complexity costs and gives on the benchmark audio (Docs/benchmarks.md).
 *
 * Encodes 48 kHz stereo s16le PCM (out/bench/in.pcm) as rtc-publish does (96 kbit/s, 20 ms,
 * OPUS_APPLICATION_AUDIO, music signal) at complexity 10 down to 0, decodes every packet again,
 * and prints per complexity: the encoder's CPU time per frame (best of five passes), the bytes
 * coded, whether the packets are identical to complexity 10's, and the decoded signal-to-noise
 * ratio against the input (a rough measure of fidelity, not a perceptual one).
 *
 *   cc -O2 scripts/opus-complexity.c -o out/opus-complexity -lopus -lm
 *   out/opus-complexity out/bench/in.pcm
 */
#include <math.h>
#include <opus/opus.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { RATE = 48000, CHANNELS = 2, FRAME = 960, MAX_PACKET = 4000, PASSES = 5 };
/* Ten minutes of stereo at most: the benchmark input is ten seconds. */
static const long MAX_FRAMES = 10L * 60 * RATE / FRAME;

static double thread_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s IN.pcm (48 kHz stereo s16le)\n", argv[0]);
        return 2;
    }
    FILE *file = fopen(argv[1], "rb");
    if (!file) {
        fprintf(stderr, "opus-complexity: cannot open %s\n", argv[1]);
        return 2;
    }
    short *pcm = malloc(sizeof(short) * CHANNELS * FRAME * MAX_FRAMES);
    size_t samples = pcm ? fread(pcm, sizeof(short), CHANNELS * FRAME * MAX_FRAMES, file) : 0;
    fclose(file);
    long frames = (long)(samples / (CHANNELS * FRAME));
    if (frames < 2) {
        fprintf(stderr, "opus-complexity: %s holds fewer than two 20 ms stereo frames\n", argv[1]);
        return 2;
    }
    long count = frames * FRAME * CHANNELS;
    float *input = malloc(sizeof(float) * count), *decoded = malloc(sizeof(float) * count);
    unsigned char *packets = malloc((size_t)frames * MAX_PACKET), *reference = malloc((size_t)frames * MAX_PACKET);
    int *lengths = malloc(sizeof(int) * frames), *reference_lengths = malloc(sizeof(int) * frames);
    if (!input || !decoded || !packets || !reference || !lengths || !reference_lengths) {
        fprintf(stderr, "opus-complexity: out of memory\n");
        return 1;
    }
    for (long i = 0; i < count; i++) input[i] = pcm[i] / 32768.0f;

    int lookahead = 0;
    for (int complexity = 10; complexity >= 0; complexity--) {
        double best = 1e9;
        long bytes = 0;
        for (int pass = 0; pass < PASSES; pass++) {
            int error = 0;
            OpusEncoder *encoder = opus_encoder_create(RATE, CHANNELS, OPUS_APPLICATION_AUDIO, &error);
            if (error != OPUS_OK) {
                fprintf(stderr, "opus_encoder_create: %s\n", opus_strerror(error));
                return 1;
            }
            opus_encoder_ctl(encoder, OPUS_SET_BITRATE(96000));
            opus_encoder_ctl(encoder, OPUS_SET_COMPLEXITY(complexity));
            opus_encoder_ctl(encoder, OPUS_SET_SIGNAL(OPUS_SIGNAL_MUSIC));
            opus_encoder_ctl(encoder, OPUS_GET_LOOKAHEAD(&lookahead));
            double spent = 0;
            bytes = 0;
            for (long f = 0; f < frames; f++) {
                double before = thread_seconds();
                int length = opus_encode_float(encoder, input + f * FRAME * CHANNELS, FRAME,
                                               packets + f * MAX_PACKET, MAX_PACKET);
                spent += thread_seconds() - before;
                if (length < 0) {
                    fprintf(stderr, "opus_encode_float: %s\n", opus_strerror(length));
                    return 1;
                }
                lengths[f] = length;
                bytes += length;
            }
            opus_encoder_destroy(encoder);
            if (spent < best) best = spent;
        }
        int error = 0;
        OpusDecoder *decoder = opus_decoder_create(RATE, CHANNELS, &error);
        if (error != OPUS_OK) {
            fprintf(stderr, "opus_decoder_create: %s\n", opus_strerror(error));
            return 1;
        }
        for (long f = 0; f < frames; f++) {
            if (opus_decode_float(decoder, packets + f * MAX_PACKET, lengths[f], decoded + f * FRAME * CHANNELS,
                                  FRAME, 0) != FRAME) {
                fprintf(stderr, "opus_decode_float failed on frame %ld\n", f);
                return 1;
            }
        }
        opus_decoder_destroy(decoder);
        /* The decoder's output lags the input by the encoder's lookahead. */
        double signal = 0, noise = 0;
        for (long i = 0; i + (long)lookahead * CHANNELS < count; i++) {
            double x = input[i], y = decoded[i + (long)lookahead * CHANNELS];
            signal += x * x;
            noise += (x - y) * (x - y);
        }
        int same = complexity == 10;
        if (complexity == 10) {
            memcpy(reference, packets, (size_t)frames * MAX_PACKET);
            memcpy(reference_lengths, lengths, sizeof(int) * frames);
        } else {
            same = 1;
            for (long f = 0; f < frames && same; f++)
                same = lengths[f] == reference_lengths[f] &&
                       memcmp(packets + f * MAX_PACKET, reference + f * MAX_PACKET, (size_t)lengths[f]) == 0;
        }
        printf("complexity %2d: %6.1f us/frame  %7ld bytes  %-22s  SNR %5.2f dB\n", complexity,
               best * 1e6 / (double)frames, bytes, same ? "same packets as 10" : "packets differ from 10",
               noise > 0 ? 10 * log10(signal / noise) : INFINITY);
    }
    printf("%ld frames of 20 ms, %s\n", frames, opus_get_version_string());
    return 0;
}
