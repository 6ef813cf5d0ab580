package io.github.hedge.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Configuration;

/** A real {@code SpringApplication} start, to see the report a user sees. */
@ExtendWith(OutputCaptureExtension.class)
class StartupFailureReportTest {

    @Test
    void should_print_the_property_range_and_value_when_the_application_fails_to_start(CapturedOutput output) {
        assertThatThrownBy(() -> new SpringApplicationBuilder(App.class)
                        .web(WebApplicationType.NONE)
                        .properties("hedge.instances.user-reads.max-extra-load=1.5", "spring.main.banner-mode=off")
                        .run())
                .hasRootCauseInstanceOf(InvalidHedgePropertyException.class);
        assertThat(output)
                .contains("APPLICATION FAILED TO START")
                .contains("Invalid hedge configuration: hedge.instances.user-reads.max-extra-load must be in (0, 1),"
                        + " was 1.5.")
                .contains("Update 'hedge.instances.user-reads.max-extra-load' so that it is in (0, 1)");
    }

    @Test
    void should_print_the_unknown_key_and_the_nearest_valid_one_when_a_hedge_key_is_misspelt(CapturedOutput output) {
        assertThatThrownBy(() -> new SpringApplicationBuilder(App.class)
                        .web(WebApplicationType.NONE)
                        .properties("hedge.instances.users.max-extra-lod=0.5", "spring.main.banner-mode=off")
                        .run())
                .isNotNull();
        assertThat(output)
                .contains("APPLICATION FAILED TO START")
                .contains("Unknown property 'hedge.instances.users.max-extra-lod'")
                .contains("did you mean 'hedge.instances.users.max-extra-load'?")
                .contains("Correct or remove the misspelt hedge.* key");
    }

    @Configuration(proxyBeanMethods = false)
    @ImportAutoConfiguration(HedgeAutoConfiguration.class)
    static class App {}
}
